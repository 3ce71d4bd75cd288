// preview: every evaluation a rule would have made over a past range and the incidents they made (contract §16,
// POST /alerts/rules/preview), through the same evaluation and state machine as live evaluation; no notice is sent.
import { badRequest } from "../errors.ts";
import type { ReadScope } from "../query/page.ts";
import { TimeSlicer } from "../query/slice.ts";
import type { StoredState } from "../storage/records/alerts.ts";
import type { EntryStore } from "../storage/entries.ts";
import { formatMs } from "../time.ts";
import { evaluateRule } from "./evaluate.ts";
import { durationMs, type Rule } from "./rules.ts";
import { decide } from "./states.ts";

/** MAX_PREVIEW_EVALUATIONS bounds a preview's work: a longer range needs a larger `every`. */
export const MAX_PREVIEW_EVALUATIONS = 1000;

/** previewRule replays `rule` at each t = k·every within [fromMs, toMs). */
export async function previewRule(entries: EntryStore, scope: ReadScope, rule: Rule, fromMs: number, toMs: number, budgetMs: number) {
  const every = durationMs(rule.every)!;
  const first = Math.ceil(fromMs / every) * every;
  const n = first < toMs ? Math.floor((toMs - 1 - first) / every) + 1 : 0;
  if (n > MAX_PREVIEW_EVALUATIONS)
    throw badRequest(
      "VALIDATION_QUERY_CONSTRAINT",
      `from, to and every make ${n} evaluations; at most ${MAX_PREVIEW_EVALUATIONS}: use a shorter range or a larger every`,
      { field: "to" },
    );
  let states: StoredState[] = [];
  const evaluations: { at: string; groups: { group: unknown; value: number | null; state: string }[]; error?: string }[] = [];
  const open = new Map<string, { group: unknown; started_at: string; resolved_at: string | null; peak: number | null }>();
  const incidents: { group: unknown; started_at: string; resolved_at: string | null; peak: number | null }[] = [];
  const slice = new TimeSlicer(budgetMs);
  for (let k = 0; k < n; k++) {
    const at = first + k * every;
    const ev = await evaluateRule(entries, scope, rule, at, slice);
    const d = decide(rule, states, ev, at, () => false);
    const removed = new Set(d.removed);
    const kept = new Map(states.filter((s) => !removed.has(s.fingerprint)).map((s) => [s.fingerprint, s]));
    for (const s of d.states) kept.set(s.fingerprint, s);
    states = [...kept.values()];
    const byFp = new Map(states.map((s) => [s.fingerprint, s.state]));
    evaluations.push({
      at: formatMs(at),
      groups: ev.ok ? ev.groups.map((g) => ({ group: g.group, value: g.value, state: byFp.get(g.fingerprint) ?? "inactive" })) : [],
      ...(ev.ok ? {} : { error: ev.reason }),
    });
    for (const tr of d.transitions) {
      if (tr.to === "firing" && tr.from !== "firing") {
        const inc = { group: tr.group, started_at: formatMs(at), resolved_at: null, peak: tr.value };
        open.set(tr.fingerprint, inc);
        incidents.push(inc);
      } else if (tr.to === "inactive") {
        const inc = open.get(tr.fingerprint);
        if (inc) inc.resolved_at = formatMs(at);
        open.delete(tr.fingerprint);
      }
    }
    for (const s of states) {
      const inc = open.get(s.fingerprint);
      if (inc && s.value !== null && (inc.peak === null || s.value > inc.peak)) inc.peak = s.value;
    }
  }
  return { evaluations, incidents };
}
