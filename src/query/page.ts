// page: runs a read — plan, candidate entries in the read order, the whole query checked on each —
// and stops as soon as the page is full (one entry more tells whether another page follows). A read over HTTP
// runs in time slices (slice.ts), so a long scan leaves room for every other request.
import type { EntryStore, Row } from "../storage/entries.ts";
import { PAUSE, rows as rowsOf, rowsSliced, type Walk } from "./execute.ts";
import type { ScanRange, Tenant } from "../storage/keys.ts";
import { formatMs } from "../time.ts";
import type { Query } from "./ast.ts";
import { formatQuery } from "./format.ts";
import { openWithin } from "./client-window.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import { planQuery, type Candidate, type QueryPlan } from "./plan.ts";
import type { Slice } from "./slice.ts";

/** PageRequest is a validated read: a query (all terms ANDed), a time range with an optional cursor, a page size. */
export interface PageRequest {
  query: Query;
  range: ScanRange;
  pageSize: number;
}

/** Page is one page of matching entries, newest first, and whether at least one more entry matches after them. */
export interface Page {
  rows: Row[];
  more: boolean;
}

/** ReadScope is what a read may see: one tenant's entries, none older than `floorMs` (retention). */
export interface ReadScope extends Tenant {
  floorMs: number;
}

/** planFor plans a read within its scope. */
export function planFor(store: EntryStore, scope: ReadScope, req: PageRequest, explaining = false): QueryPlan {
  const range = { ...req.range, fromMs: Math.max(req.range.fromMs, scope.floorMs) };
  return planQuery(store, scope, req.query, range, explaining);
}

/** readPage returns one page of matching entries, newest first, pausing whenever `slice` is used up. */
export async function readPage(store: EntryStore, scope: ReadScope, req: PageRequest, slice: Slice): Promise<Page> {
  const plan = planFor(store, scope, req);
  return runSliced(store, scope, req.query, plan.range, plan.chosen, req.pageSize, slice);
}

/** walkOf is a read of `query` over `range`: each entry checked by the query, each block narrowed by its block test. */
function walkOf(store: EntryStore, tenant: Tenant, query: Query, range: ScanRange): Walk {
  return { store, tenant, range, accept: compileQuery(query, tenant.env), narrow: compileBlockTest(query, tenant.env) };
}

/** runCandidate reads candidates in the read order and keeps those the query accepts, up to a page (plus whether more follow), in one go. */
export function runCandidate(store: EntryStore, tenant: Tenant, query: Query, range: ScanRange, candidate: Candidate, pageSize: number) {
  const rows: Row[] = [];
  for (const row of rowsOf(walkOf(store, tenant, query, range), openWithin(store, tenant, query, candidate.open))) {
    if (rows.length === pageSize) return { rows, more: true };
    rows.push(row);
  }
  return { rows, more: false };
}

/** runSliced is runCandidate in time slices: it lets the event loop run whenever `slice` is used up, and gives the same rows. */
export async function runSliced(store: EntryStore, tenant: Tenant, query: Query, range: ScanRange, candidate: Candidate, pageSize: number, slice: Slice) {
  const rows: Row[] = [];
  for (const row of rowsSliced(walkOf(store, tenant, query, range), openWithin(store, tenant, query, candidate.open), slice.due)) {
    if (row === PAUSE)
      await slice.pause(); // a throw here (over budget) closes the generator and its cursors
    else if (rows.length === pageSize) return { rows, more: true };
    else rows.push(row);
  }
  return { rows, more: false };
}

/** explain describes the plan a read would run, with every estimate, instead of running it. */
export function explain(store: EntryStore, scope: ReadScope, req: PageRequest) {
  const plan = planFor(store, scope, req, true);
  const describe = (c: QueryPlan["chosen"]) => ({ index: c.index, term: c.term ?? null, estimate_blocks: c.estimate });
  return {
    plan: describe(plan.chosen),
    estimates: plan.candidates.map(describe),
    residual: formatQuery(req.query),
    range: {
      from: Number.isFinite(plan.range.fromMs) && plan.range.fromMs > 0 ? formatMs(plan.range.fromMs) : null,
      to: plan.range.toMs < 8.64e15 ? formatMs(plan.range.toMs) : null,
      after: plan.range.after ?? null,
    },
  };
}

/** readOne finds one entry of the scope by id. */
export function readOne(store: EntryStore, scope: ReadScope, id: string): Row | undefined {
  const row = store.get(scope, id);
  return row && row.serverMs >= scope.floorMs ? row : undefined;
}
