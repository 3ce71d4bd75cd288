// AlertStore (contract §16): an evaluation's states, transitions and notices commit together; history is bounded;
// a settled notice leaves the outbox and records its delivery.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AlertStore, MAX_HISTORY_PER_RULE, type StoredTransition } from "../../../src/storage/records/alerts.ts";
import { openDatabases } from "../../../src/storage/db.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-alert-store-"));
const dbs = openDatabases(dir, () => {}, 2 ** 30);
const store = new AlertStore(dbs.alerts);
const t = { ws: "w1", env: "development" as const };
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const transition = (atMs: number): StoredTransition => ({
  id: Bun.randomUUIDv7(),
  atMs,
  ruleId: "r1",
  group: null,
  fingerprint: "f",
  from: "inactive",
  to: "firing",
  value: 1,
  deliveries: [{ channel_id: "c1", status: "pending", attempts: 0, error: null }],
});

test("a rule keeps its newest MAX_HISTORY_PER_RULE transitions", async () => {
  await store.put("rule", t, "r1", { id: "r1", enabled: true });
  const transitions = Array.from({ length: MAX_HISTORY_PER_RULE + 5 }, (_, i) => transition(1000 + i));
  await store.commitEvaluation(t, { ruleId: "r1", atMs: 5000, states: [], removed: [], transitions, notices: [] });
  const kept = store.history(t, "r1", 0, 1e15, 10_000);
  expect(kept).toHaveLength(MAX_HISTORY_PER_RULE);
  expect(kept[0].atMs).toBe(1005);
  expect(store.lastEvaluated(t, "r1")).toBe(5000);
});

test("an evaluation of a deleted rule stores nothing", async () => {
  await store.commitEvaluation(t, { ruleId: "gone", atMs: 1, states: [], removed: [], transitions: [transition(1)], notices: [] });
  expect(store.lastEvaluated(t, "gone")).toBeUndefined();
});

test("settle records the delivery in its transition and drops the notice; a retry keeps it with its next time", async () => {
  const tr = { ...transition(9_000_000), ruleId: "r1" };
  const historyKey = ["history", t.ws, t.env, "r1", tr.atMs, tr.id];
  const notice = {
    id: "n1",
    ws: t.ws,
    env: t.env,
    channelId: "c1",
    historyKey,
    payload: { status: "firing" as const, ruleId: "r1", ruleName: "r", alerts: [] },
    attempts: 0,
    dueMs: 0,
    firstMs: 0,
  };
  await store.commitEvaluation(t, { ruleId: "r1", atMs: 9_000_000, states: [], removed: [], transitions: [tr], notices: [notice] });
  await store.settle(notice, { channel_id: "c1", status: "pending", attempts: 1, error: "the receiver answered 500" }, 9_001_000);
  expect(store.outbox()).toMatchObject([{ id: "n1", attempts: 1, dueMs: 9_001_000 }]);
  await store.settle(store.outbox()[0], { channel_id: "c1", status: "delivered", attempts: 2, error: null });
  expect(store.outbox()).toEqual([]);
  const last = store.history(t, "r1", 9_000_000, 9_000_001, 10);
  expect(last[0].deliveries).toEqual([{ channel_id: "c1", status: "delivered", attempts: 2, error: null }]);
});

test("an evaluation of a disabled rule stores nothing unless it retires the rule", async () => {
  await store.put("rule", t, "r2", { id: "r2", enabled: false });
  const state = { fingerprint: "f", group: null, state: "firing" as const, value: 1, activeSinceMs: 0, lastEvaluatedMs: 0 };
  await store.commitEvaluation(t, { ruleId: "r2", atMs: 1, states: [state], removed: [], transitions: [], notices: [] });
  expect(store.states(t, "r2")).toEqual([]);
  await store.commitEvaluation(t, { ruleId: "r2", atMs: 2, states: [], removed: [], transitions: [], notices: [], retiring: true });
  expect(store.lastEvaluated(t, "r2")).toBe(2);
});

test("a round's readings update the values and times of states still stored, and of rules still enabled", async () => {
  await store.put("rule", t, "r3", { id: "r3", enabled: true });
  const state = (f: string) => ({ fingerprint: f, group: null, state: "firing" as const, value: 1, activeSinceMs: 0, lastEvaluatedMs: 0, notifiedMs: 0 });
  await store.commitEvaluation(t, { ruleId: "r3", atMs: 10, states: [state("a")], removed: [], transitions: [], notices: [] });
  const values = [
    { fingerprint: "a", value: 7 },
    { fingerprint: "resolved meanwhile", value: 3 },
  ];
  await store.commitReadings([
    { t, ruleId: "r3", atMs: 20, values },
    { t, ruleId: "gone", atMs: 20, values },
    { t, ruleId: "r2", atMs: 20, values },
  ]);
  expect(store.states(t, "r3")).toEqual([{ ...state("a"), value: 7, lastEvaluatedMs: 20 }]);
  expect(store.lastEvaluated(t, "r3")).toBe(20);
  expect(store.lastEvaluated(t, "gone")).toBeUndefined();
  expect(store.states(t, "r2")).toEqual([]);
  await store.commitReadings([{ t, ruleId: "r3", atMs: 15, values: [{ fingerprint: "a", value: 0 }] }]);
  expect(store.states(t, "r3")[0].value).toBe(7); // an older reading never overwrites a newer evaluation
});
