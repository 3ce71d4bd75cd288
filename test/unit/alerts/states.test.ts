// states.decide (contract §16): one row per rule of the state machine, inactive → pending → firing → inactive.
import { expect, test } from "bun:test";
import type { Evaluation } from "../../../src/alerts/evaluate.ts";
import type { Rule } from "../../../src/alerts/rules.ts";
import { decide, retireAll } from "../../../src/alerts/states.ts";
import type { StoredState } from "../../../src/storage/records/alerts.ts";

const rule = (over: Partial<Rule> = {}): Rule => ({
  id: "r",
  name: "r",
  query: "",
  group_by: [],
  aggregate: { fn: "count", field: null },
  condition: { op: ">", threshold: 0 },
  window: "1m",
  every: "1m",
  for: "0s",
  axis: "server",
  delay: "0s",
  labels: {},
  annotations: {},
  channels: [],
  repeat_interval: "4h",
  notify_resolved: true,
  samples: 5,
  enabled: true,
  created_at: "",
  updated_at: "",
  ...over,
});
const window = { axis: "server" as const, fromMs: 0, toMs: 1 };
const value = (v: number | null): Evaluation => ({ ok: true, window, groups: [{ group: null, fingerprint: "f", value: v, samples: [] }] });
const state = (over: Partial<StoredState>): StoredState => ({
  fingerprint: "f",
  group: null,
  state: "firing",
  value: 1,
  activeSinceMs: 0,
  lastEvaluatedMs: 0,
  ...over,
});
const M = 60_000;

type Row = [string, Partial<Rule>, StoredState[], Evaluation, number, string[], string[]];
// name, rule, previous states, evaluation, at, [transitions], [announcements]
const rows: Row[] = [
  ["holds, for 0s: inactive → firing, announced", {}, [], value(3), M, ["inactive→firing"], ["firing"]],
  ["holds, for 2m: inactive → pending, not announced", { for: "2m" }, [], value(3), M, ["inactive→pending"], []],
  ["holds for ≥ for: pending → firing", { for: "2m" }, [state({ state: "pending", activeSinceMs: 0 })], value(3), 2 * M, ["pending→firing"], ["firing"]],
  ["holds for less than for: stays pending", { for: "2m" }, [state({ state: "pending", activeSinceMs: 0 })], value(3), M, [], []],
  ["fails while pending: → inactive, no notice", { for: "2m" }, [state({ state: "pending" })], value(0), M, ["pending→inactive"], []],
  ["fails while firing and announced: → inactive, resolved", {}, [state({ notifiedMs: 0 })], value(0), M, ["firing→inactive"], ["resolved"]],
  ["fails while firing, notify_resolved false: no notice", { notify_resolved: false }, [state({ notifiedMs: 0 })], value(0), M, ["firing→inactive"], []],
  ["fails while firing, never announced (silenced): no resolved notice", {}, [state({})], value(0), M, ["firing→inactive"], []],
  ["still firing within repeat_interval: nothing", {}, [state({ notifiedMs: 0 })], value(3), M, [], []],
  [
    "still firing after repeat_interval: announced again as firing → firing",
    { repeat_interval: "1m" },
    [state({ notifiedMs: 0 })],
    value(3),
    M,
    ["firing→firing"],
    ["firing"],
  ],
  ["a null value (no number to aggregate) never holds", { condition: { op: "<", threshold: 5 } }, [], value(null), M, [], []],
  ["an error evaluation: → error once, groups kept", {}, [state({ notifiedMs: 0 })], { ok: false, window, reason: "too many" }, M, ["inactive→error"], []],
];

for (const [name, over, previous, ev, at, transitions, announced] of rows) {
  test(name, () => {
    const d = decide(rule(over), previous, ev, at, () => false);
    expect(d.transitions.map((t) => `${t.from}→${t.to}`)).toEqual(transitions);
    expect(d.announcements.map((a): string => a.status)).toEqual(announced);
  });
}

test("a silenced group changes state but is not announced, and is announced once the silence ends", () => {
  const first = decide(rule(), [], value(3), M, () => true);
  expect(first.transitions.map((t) => t.to)).toEqual(["firing"]);
  expect(first.announcements).toEqual([]);
  const later = decide(rule(), first.states, value(3), 2 * M, () => false);
  expect(later.announcements.map((a) => a.status)).toEqual(["firing"]);
});

test("retireAll ends every group; only an announced firing one owes a resolved notice", () => {
  const d = retireAll(rule(), [state({ notifiedMs: 0 }), state({ fingerprint: "g", state: "pending" })], M);
  expect(d.removed).toEqual(["f", "g"]);
  expect(d.announcements.map((a) => `${a.status} ${a.state.fingerprint}`)).toEqual(["resolved f"]);
});
