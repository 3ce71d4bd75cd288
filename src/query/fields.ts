// fields: the object paths present in the newest matching entries, with counts and JSON types, for completion
// (contract §10, POST /logs/fields).
import type { EntryStore } from "../storage/entries.ts";
import type { Query } from "./ast.ts";
import { PAUSE, rowsSliced } from "./execute.ts";
import { openWithin } from "./client-window.ts";
import { compileBlockTest, compileQuery } from "./compile.ts";
import type { Window } from "./explore-request.ts";
import { OBJECT_FACETS } from "./ast.ts";
import type { ReadScope } from "./page.ts";
import { planQuery } from "./plan.ts";
import type { Slice } from "./slice.ts";
import { serverRange } from "./tally.ts";

/** SCAN_MAX is the most matching entries one answer reads, newest first. */
export const SCAN_MAX = 100_000;
/** FIELDS_MAX is the most paths one answer lists. */
export const FIELDS_MAX = 1000;
/** PATHS_KEPT bounds the distinct paths counted; paths first seen past it are not counted and the answer is not complete. */
export const PATHS_KEPT = 100_000;

/** FieldsRequest is a validated fields request. */
export interface FieldsRequest {
  query: Query;
  window: Window;
  prefix: string;
}

/** typeOf names a leaf's JSON type. */
const typeOf = (v: unknown): string => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);

/** listFields reads up to SCAN_MAX newest matching entries and counts the leaf paths of their objects. */
export async function listFields(store: EntryStore, scope: ReadScope, req: FieldsRequest, slice: Slice) {
  const range = serverRange(scope, req.window);
  const plan = planQuery(store, scope, req.query, range);
  const test = compileQuery(req.query, scope.env);
  const client = req.window.axis === "client";
  const accept = client
    ? (row: Parameters<typeof test>[0]) => row.entry.clientMs >= req.window.fromMs && row.entry.clientMs < req.window.toMs && test(row)
    : test;
  const paths = new Map<string, { count: number; types: Set<string> }>();
  let scanned = 0;
  let complete = true;
  const seen = new Set<string>(); // one entry's paths: an entry counts once per path
  const leaf = (path: string, value: unknown) => {
    if (seen.has(path)) return;
    seen.add(path);
    let p = paths.get(path);
    if (!p) {
      if (paths.size >= PATHS_KEPT) {
        complete = false;
        return;
      }
      paths.set(path, (p = { count: 0, types: new Set() }));
    }
    p.count++;
    p.types.add(typeOf(value));
  };
  const visit = (prefix: string, obj: Record<string, unknown>) => {
    for (const [k, v] of Object.entries(obj)) {
      const path = `${prefix}.${k}`;
      if (v !== null && typeof v === "object" && !Array.isArray(v)) visit(path, v as Record<string, unknown>);
      else if (path.startsWith(req.prefix)) leaf(path, v);
    }
  };
  const walk = { store, tenant: scope, range: plan.range, accept, narrow: compileBlockTest(req.query, scope.env) };
  for (const row of rowsSliced(walk, openWithin(store, scope, req.query, plan.chosen.open), slice.due)) {
    if (row === PAUSE) {
      await slice.pause();
      continue;
    }
    if (scanned === SCAN_MAX) {
      complete = false;
      break;
    }
    scanned++;
    seen.clear();
    for (const facet of OBJECT_FACETS) {
      const obj = row.entry[facet];
      if (obj !== null) visit(facet, obj);
    }
  }
  const fields = [...paths]
    .sort(([a, x], [b, y]) => y.count - x.count || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, FIELDS_MAX)
    .map(([field, p]) => ({ field, count: p.count, types: [...p.types].sort() }));
  return { fields, scanned, complete };
}
