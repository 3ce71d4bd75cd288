// context: the entries around one entry in the list order, optionally only those matching a query (contract §10,
// GET /logs/{id}/context).
import type { EntryStore, Row } from "../storage/entries.ts";
import type { Query } from "./ast.ts";
import { ascendingRows, TOP } from "./ascending.ts";
import { compileQuery } from "./compile.ts";
import { PAUSE } from "./execute.ts";
import { readOne, runSliced, planFor, type ReadScope } from "./page.ts";
import type { Slice } from "./slice.ts";

/** ContextRequest is a validated context request. */
export interface ContextRequest {
  id: string;
  query: Query;
  before: number;
  after: number;
}

/** readContext finds the entry and its neighbours in the list order (newest first), or undefined when the entry is not in scope. */
export async function readContext(store: EntryStore, scope: ReadScope, req: ContextRequest, slice: Slice) {
  const entry = readOne(store, scope, req.id);
  if (!entry) return undefined;
  const at = { ms: entry.serverMs, id: entry.entry.id };
  // older: a page of the list right after the entry
  const range = { fromMs: scope.floorMs, toMs: 8.64e15, after: at };
  const plan = planFor(store, scope, { query: req.query, range, pageSize: req.before });
  const before = req.before === 0 ? [] : (await runSliced(store, scope, req.query, plan.range, plan.chosen, req.before, slice)).rows;
  // newer: read forward from the entry, then give them newest first
  const after: Row[] = [];
  if (req.after > 0) {
    const accept = compileQuery(req.query, scope.env);
    for (const row of ascendingRows(store, scope, at, TOP, accept, slice.due)) {
      if (row === PAUSE) await slice.pause();
      else if (after.push(row) === req.after) break;
    }
  }
  return { after: after.reverse(), entry, before };
}
