// logs: a LogQL log query's answer: exactly the first `limit` kept entries of [start, end) in `direction`, ordered by
// (client_timestamp, id), grouped into streams (contract §17).
import type { ReadScope } from "../query/page.ts";
import type { Slice } from "../query/slice.ts";
import type { EntryStore } from "../storage/entries.ts";
import type { LogExpr } from "./ast.ts";
import { type Labels, labelsKey } from "./labels.ts";
import { type ClientWindow, type Selected, selectEntries } from "./select.ts";

/** Direction is the order of a log query's answer. */
export type Direction = "forward" | "backward";

/** LogStream is one stream of the answer: its labels and its values, each [ns, line] or [ns, line, categorized labels]. */
export interface LogStream {
  stream: Labels;
  values: (string[] | [string, string, Record<string, Labels>])[];
}

const before = (a: Selected, b: Selected) => a.entry.clientMs - b.entry.clientMs || (a.entry.id < b.entry.id ? -1 : a.entry.id > b.entry.id ? 1 : 0);

/** firstEntries keeps the first `limit` selected entries in `direction`, sorting only when the kept set doubles. */
export async function firstEntries(store: EntryStore, scope: ReadScope, log: LogExpr, window: ClientWindow, limit: number, direction: Direction, slice: Slice) {
  const forward = direction === "forward";
  const order = forward ? before : (a: Selected, b: Selected) => before(b, a);
  let kept: Selected[] = [];
  const cap = Math.max(2 * limit, 64);
  // once `limit` entries are kept, one that comes after the last of them cannot be among the first: it is not decoded
  let worst: { ms: number; id: string } | undefined;
  const trim = () => {
    kept = kept.sort(order).slice(0, limit);
    const last = kept[limit - 1].entry;
    worst = { ms: last.clientMs, id: last.id };
  };
  // asked before each block: the last kept entry is known as soon as `limit` entries are
  const settled = () => {
    if (kept.length > limit || (kept.length === limit && !worst)) trim();
    return worst;
  };
  const admit = (ms: number, id: string) => {
    if (!worst) return true;
    const cmp = ms - worst.ms || (id < worst.id ? -1 : id > worst.id ? 1 : 0);
    return forward ? cmp < 0 : cmp > 0;
  };
  await selectEntries(
    store,
    scope,
    log,
    window,
    slice,
    (s) => {
      // at `limit` the bound is set at once: with a block's newest entries first, the rest of it is then skipped undecoded
      if (kept.push(s) >= cap || (kept.length === limit && !worst)) trim();
    },
    undefined,
    admit,
    // a block whose every client time comes after the last kept entry's holds none of the first (ties: by id, so kept)
    {
      wants: (lo, hi) => {
        const last = settled();
        return !last || (forward ? lo <= last.ms : hi >= last.ms);
      },
      reach: () => (forward ? Number.NEGATIVE_INFINITY : (settled()?.ms ?? Number.NEGATIVE_INFINITY)),
      newestFirst: !forward,
    },
  );
  return kept.sort(order).slice(0, limit);
}

/** nsOf is an entry's client time in nanoseconds, as Loki writes it. */
export const nsOf = (ms: number): string => (ms === 0 ? "0" : `${ms}000000`);

/** toStreams groups entries (in answer order) into streams; categorized keeps metadata and parsed labels apart (categorize-labels). */
export function toStreams(entries: Selected[], categorized: boolean): LogStream[] {
  const streams = new Map<string, LogStream>();
  const labelSets = entries.map(({ out }) => (categorized ? out.stream : { ...out.metadata, ...out.parsed, ...out.stream }));
  // when every entry carries its own sluice_id, each makes a stream of its own: no key to build
  const own = labelSets.every((labels, k) => labels.sluice_id === entries[k].entry.id);
  for (const [k, { entry, out }] of entries.entries()) {
    const labels = labelSets[k];
    const key = own ? entry.id : labelsKey(labels);
    let s = streams.get(key);
    if (!s) streams.set(key, (s = { stream: labels, values: [] }));
    if (!categorized) s.values.push([nsOf(entry.clientMs), out.line]);
    else {
      const extra: Record<string, Labels> = {};
      if (Object.keys(out.metadata).length > 0) extra.structuredMetadata = out.metadata;
      if (Object.keys(out.parsed).length > 0) extra.parsed = out.parsed;
      s.values.push([nsOf(entry.clientMs), out.line, extra]);
    }
  }
  return [...streams.values()];
}
