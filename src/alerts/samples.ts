// samples: the newest matching entries of the groups a notice announces (contract §16: up to `samples` of them, each
// {id, server_timestamp, level, action, message}). Read in a pass of their own, only when a notice goes out.
import type { Window } from "../query/explore-request.ts";
import { groupReader, parseGroupField } from "../query/group-field.ts";
import type { ReadScope } from "../query/page.ts";
import { parseQuery } from "../query/parser.ts";
import type { Slice } from "../query/slice.ts";
import { tally } from "../query/tally.ts";
import type { EntryStore } from "../storage/entries.ts";
import { formatMs } from "../time.ts";
import { combinations, type Group, type Sample } from "./evaluate.ts";
import type { Rule } from "./rules.ts";

/** collectSamples gives, per group asked for (by its JSON), its newest `rule.samples` matching entries of the window, newest first. */
export async function collectSamples(
  store: EntryStore,
  scope: ReadScope,
  rule: Rule,
  window: Window,
  wanted: Group[],
  slice: Slice,
): Promise<Map<string, Sample[]>> {
  const fields = rule.group_by.map((f) => parseGroupField(f, "group_by"));
  const readers = fields.map((f) => groupReader(f, scope.env));
  const keyOf = (g: Group) => JSON.stringify(fields.map((f) => g?.[f.name] ?? null));
  const kept = new Map<string, { ms: number; s: Sample }[]>(wanted.map((g) => [keyOf(g), []]));
  const out = new Map<string, Sample[]>();
  if (rule.samples === 0 || kept.size === 0) return out;
  await tally(store, scope, parseQuery(rule.query), window, slice, {
    entry(block, i, ms) {
      for (const combo of combinations(readers.map((r) => [...r(block, i)]))) {
        const list = kept.get(JSON.stringify(combo));
        if (!list) continue;
        if (list.length >= rule.samples) {
          const oldest = list.reduce((a, b) => (b.ms < a.ms ? b : a));
          if (oldest.ms >= ms) continue;
          list.splice(list.indexOf(oldest), 1);
        }
        // read now: a block's bytes sit in a buffer the next read reuses
        list.push({ ms, s: { id: block.id(i), server_timestamp: formatMs(ms), level: block.level(i), action: block.action(i), message: block.message(i) } });
      }
    },
  });
  for (const g of wanted) {
    const list = (kept.get(keyOf(g)) ?? []).sort((a, b) => b.ms - a.ms);
    out.set(
      JSON.stringify(g),
      list.map((x) => x.s),
    );
  }
  return out;
}
