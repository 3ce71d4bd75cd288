// The planner (plan.ts) on a real LMDB: which candidates a read counts, and which only explain shows.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../../src/ids.ts";
import { jointNeedle } from "../../../src/query/joint.ts";
import { parseQuery } from "../../../src/query/parser.ts";
import { needleOf, planQuery } from "../../../src/query/plan.ts";
import { openDatabases } from "../../../src/storage/db.ts";
import { EntryStore, type Entry } from "../../../src/storage/entries.ts";
import { blockFilter, filterMayHold } from "../../../src/storage/indexes/needles.ts";
import { UsageStore } from "../../../src/storage/usage.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-plan-"));
const dbs = openDatabases(dir, () => {});
const store = new EntryStore(dbs, new UsageStore(dbs.usage));
afterAll(async () => {
  await store.settled();
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});
const tenant = { ws: "ws-plan", env: "production" as const };
const ALL = { fromMs: 0, toMs: 8.64e15 };
const T0 = Date.parse("2026-11-24T10:00:00.000Z");
const entry = (message: string, metadata: Record<string, unknown> | null = null): Omit<Entry, "id"> => ({
  level: "info",
  action: "svc.op",
  message,
  tags: [],
  clientMs: 0,
  actor: null,
  target: null,
  context: null,
  metadata,
});

const ids = new IdGenerator();
for (let b = 0; b < 8; b++) {
  const { ms, ids: fresh } = ids.next(3, T0 + b);
  const messages = b === 5 ? ["connection timed out", "connection reset", "x1 timed"] : ["routine step", "routine connection", "idle"];
  await store.append(
    tenant,
    ms,
    messages.map((m, i) => ({ ...entry(m, { n: b }), id: fresh[i] }) as Entry),
    -1,
  );
}
const indexes = (query: string, explaining = false) => planQuery(store, tenant, parseQuery(query), ALL, explaining).candidates.map((c) => c.index);

test("full text is not asked for a term whose words the filters hold; a word with a digit is asked", () => {
  expect(indexes("timed")).not.toContain("fulltext");
  expect(indexes('message@"timed out"')).not.toContain("fulltext");
  expect(indexes("x1")).toContain("fulltext");
  expect(indexes("ab")).toContain("fulltext"); // shorter than the filters' words
});

test("explain shows full text's estimate without choosing it: the plan it shows is the one a read runs", () => {
  const shown = planQuery(store, tenant, parseQuery("timed"), ALL, true);
  expect(shown.candidates.map((c) => c.index)).toContain("fulltext");
  expect(shown.chosen.index).toBe(planQuery(store, tenant, parseQuery("timed"), ALL).chosen.index);
  expect(shown.chosen.index).not.toBe("fulltext");
});

test("terms with filters are counted together, in place of each one's own, and name only the blocks holding all", () => {
  const read = planQuery(store, tenant, parseQuery("connection timed"), ALL);
  expect(read.candidates.map((c) => c.index)).toEqual(["range", "filters"]);
  expect(read.chosen).toMatchObject({ index: "filters", term: "connection timed", estimate: 1 });
  expect([...read.chosen.open()].length).toBe(1);
  const shown = planQuery(store, tenant, parseQuery("connection timed"), ALL, true);
  expect(shown.candidates.map((c) => c.index)).toEqual(["range", "filters", "fulltext", "substring", "fulltext", "substring"]);
  expect(shown.chosen.index).toBe("filters");
});

test("a joint needle holds, in a filter, exactly when every term's own needle does", () => {
  const terms = parseQuery('connection metadata.n=5 message~"med ou"').terms;
  const needles = terms.map((term) => ({ term, needle: needleOf(term)!.needle }));
  const joint = jointNeedle(needles)!;
  expect(joint.terms).toEqual(terms);
  expect(joint.needle.length).toBe(2); // the free word in the message or in the action, times one each
  for (const [message, n] of [
    ["connection timed out", 5],
    ["connection timed out", 4],
    ["connection reset", 5],
    ["timed out", 5],
  ] as const) {
    const filter = blockFilter([{ ...entry(message, { n }) }]);
    expect(filterMayHold(filter, joint.needle)).toBe(needles.every((x) => filterMayHold(filter, x.needle)));
  }
});

test("a joint needle of too many combinations is not made, nor one of a single term", () => {
  const many = parseQuery("alpha beta gamma delta epsilon").terms.map((term) => ({ term, needle: needleOf(term)!.needle })); // 2^5 alternatives
  expect(jointNeedle(many)).toBeUndefined();
  expect(jointNeedle(many.slice(0, 1))).toBeUndefined();
  expect(jointNeedle(many.slice(0, 4))?.needle.length).toBe(16);
});
