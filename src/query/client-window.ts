// client-window: the client times a query's entries must lie within, so that a read passes over, unread, each block
// whose stored client time bounds (storage/indexes/bounds.ts) hold none of them.
import type { EntryStore } from "../storage/entries.ts";
import type { BlockRef, Tenant } from "../storage/keys.ts";
import type { Query } from "./ast.ts";

/** ClientWindow is an inclusive range of whole client milliseconds every matching entry is within. */
export interface ClientWindow {
  lo: number;
  hi: number;
}

/**
 * clientWindowOf reads the client_timestamp terms of a query (all ANDed) as the whole milliseconds they allow, or
 * undefined when they bound nothing. It may allow more than they do (an instant's fraction of a millisecond is
 * rounded outwards), never less: the executor still tests each entry.
 */
export function clientWindowOf(q: Query): ClientWindow | undefined {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  for (const t of q.terms) {
    if (t.kind !== "time" || t.facet !== "client_timestamp" || t.op === "!=" || t.values.length === 0) continue;
    const ms = t.values.map((v) => v.instant.ms);
    // a term holds when any of its values does: the loosest value bounds it
    if (t.op === ">" || t.op === ">=" || t.op === "=") lo = Math.max(lo, Math.min(...ms));
    if (t.op === "<" || t.op === "<=" || t.op === "=") hi = Math.min(hi, Math.max(...ms));
  }
  return lo === Number.NEGATIVE_INFINITY && hi === Number.POSITIVE_INFINITY ? undefined : { lo, hi };
}

/** withinClientWindow yields the references whose blocks may hold an entry of the window (no bounds stored: may). */
export function* withinClientWindow(store: Pick<EntryStore, "clientBounds">, tenant: Tenant, refs: Iterable<BlockRef>, w: ClientWindow): Generator<BlockRef> {
  for (const ref of refs) {
    const bounds = store.clientBounds(tenant, ref.ms, ref.firstId);
    if (bounds === undefined || (bounds[1] >= w.lo && bounds[0] <= w.hi)) yield ref;
  }
}

/** openWithin opens a plan's references, passing over the blocks outside the query's client window when it has one. */
export function openWithin(store: Pick<EntryStore, "clientBounds">, tenant: Tenant, q: Query, open: () => Iterable<BlockRef>): Iterable<BlockRef> {
  const w = clientWindowOf(q);
  return w === undefined ? open() : withinClientWindow(store, tenant, open(), w);
}
