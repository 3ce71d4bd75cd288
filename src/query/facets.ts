// facets: the top values of fields among the matching entries, with other, missing and the exact number of distinct
// values (contract §10, POST /logs/facets).
import type { EntryStore } from "../storage/entries.ts";
import type { Query } from "./ast.ts";
import type { Window } from "./explore-request.ts";
import { countBlockGroups, groupReader, type GroupField } from "./group-field.ts";
import { byTotalThenText } from "./hits.ts";
import type { ReadScope } from "./page.ts";
import type { Slice } from "./slice.ts";
import { tally } from "./tally.ts";

/** MAX_DISTINCT is the most distinct values a facet keeps; past it the facet answers too_many. */
export const MAX_DISTINCT = 100_000;
/** DEFAULT_FACETS are the fields counted when none are named. */
export const DEFAULT_FACETS = ["level", "action", "tag"];

/** FacetsRequest is a validated facets request. */
export interface FacetsRequest {
  query: Query;
  window: Window;
  fields: GroupField[];
  limit: number;
}

/** countFacets counts each field's values among the matching entries of the window, exactly. */
export async function countFacets(store: EntryStore, scope: ReadScope, req: FacetsRequest, slice: Slice) {
  const facets = req.fields.map((field) => ({
    field,
    read: groupReader(field, scope.env),
    counts: new Map<string, number>() as Map<string, number> | null, // null once past MAX_DISTINCT
    valued: 0, // (entry, value) pairs counted
    missing: 0,
  }));
  let total = 0;
  const add = (f: (typeof facets)[number], text: string | null, count: number) => {
    if (text === null) {
      f.missing += count;
      return;
    }
    f.valued += count;
    const counts = f.counts;
    if (counts === null) return;
    const had = counts.get(text);
    if (had !== undefined) counts.set(text, had + count);
    else if (counts.size === MAX_DISTINCT)
      f.counts = null; // the values are dropped, the memory with them; missing and other stay exact
    else counts.set(text, count);
  };
  await tally(store, scope, req.query, req.window, slice, {
    entry(block, i) {
      total++;
      for (const f of facets) {
        const values = f.read(block, i);
        if (values.length === 0) add(f, null, 1);
        else for (const v of values) add(f, v, 1);
      }
    },
    block(block, positions) {
      total += positions ? positions.length : block.size;
      for (const f of facets) {
        if (countBlockGroups(f.field, scope.env, block, positions, (text, count) => add(f, text, count))) continue;
        const one = (i: number) => {
          const values = f.read(block, i);
          if (values.length === 0) add(f, null, 1);
          else for (const v of values) add(f, v, 1);
        };
        if (positions) for (const i of positions) one(i);
        else for (let i = 0; i < block.size; i++) one(i);
      }
    },
  });
  return {
    total,
    facets: facets.map((f) => {
      if (f.counts === null) return { field: f.field.name, values: [], other: f.valued, missing: f.missing, distinct: null, too_many: true };
      const values = [...f.counts]
        .map(([text, total]) => ({ text, total }))
        .sort(byTotalThenText)
        .slice(0, req.limit)
        .map(({ text, total }) => ({ value: text, count: total }));
      const listed = values.reduce((s, v) => s + v.count, 0);
      return { field: f.field.name, values, other: f.valued - listed, missing: f.missing, distinct: f.counts.size, too_many: false };
    }),
  };
}
