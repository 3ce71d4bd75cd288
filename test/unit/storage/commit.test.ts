// The write batch of one event-loop turn: a turn that cannot be encoded stores none of its writes and
// gives their quota back; writes of one tenant and millisecond share blocks and keep their own verdicts; each
// committed block is announced once, before its writes are answered.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../../src/ids.ts";

const generator = new IdGenerator();
const nextIds = (count: number, now = Date.now()) => generator.next(count, now);
import { scan } from "../../../src/query/execute.ts";
import { openDatabases } from "../../../src/storage/db.ts";
import { EntryStore, type Entry } from "../../../src/storage/entries.ts";
import { UsageStore } from "../../../src/storage/usage.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-commit-"));
const dbs = openDatabases(dir);
const usage = new UsageStore(dbs.usage);
const store = new EntryStore(dbs, usage);
afterAll(async () => {
  await store.settled();
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const MONTH = "2026-11";
const write = (n: number, metadata: Entry["metadata"] = null) => {
  const { ms, ids } = nextIds(n, Date.parse("2026-11-22T09:00:00.000Z"));
  const entries = ids.map(
    (id): Entry => ({
      id,
      level: "info",
      action: "commit.test",
      message: `m ${id}`,
      tags: [],
      clientMs: ms,
      actor: null,
      target: null,
      context: null,
      metadata,
    }),
  );
  return { ms, ids, entries };
};
const all = (ws: string) => [...scan(store, { ws: ws, env: "development" }, { fromMs: 0, toMs: 8.64e15 })].map((r) => r.entry.id);

test("a turn whose encoding fails stores none of its writes and gives their quota back", async () => {
  const good = write(3);
  const bad = write(2, { n: 1n as unknown as number }); // JSON.stringify throws on a BigInt: the block cannot be encoded
  const results = await Promise.allSettled([
    store.append({ ws: "ws-fail", env: "development" }, good.ms, good.entries, 10),
    store.append({ ws: "ws-fail", env: "development" }, bad.ms, bad.entries, 10),
  ]);
  expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  expect(all("ws-fail")).toEqual([]);
  expect(usage.used("ws-fail", MONTH)).toBe(0);
  const again = write(10);
  expect(await store.append({ ws: "ws-fail", env: "development" }, again.ms, again.entries, 10)).toEqual({ stored: true, used: 10 }); // the whole quota is free again
  expect(all("ws-fail").length).toBe(10);
});

test("writes of one turn share a block, and one over the quota is refused alone", async () => {
  const a = write(4);
  const b = write(7); // 4 + 7 passes 10: refused, nothing of it stored
  const c = write(5);
  const [ra, rb, rc] = await Promise.all([a, b, c].map((w) => store.append({ ws: "ws-share", env: "development" }, w.ms, w.entries, 10)));
  expect([ra, rb, rc]).toEqual([
    { stored: true, used: 4 },
    { stored: false, used: 4 },
    { stored: true, used: 9 },
  ]);
  expect(all("ws-share")).toEqual([...a.ids, ...c.ids].reverse());
  expect(store.countBlocks({ ws: "ws-share", env: "development" }, { fromMs: 0, toMs: 8.64e15 }, 100).n).toBe(1);
  expect(usage.used("ws-share", MONTH)).toBe(9);
});

test("each committed block is announced once, before its writes are answered; a refused write announces nothing", async () => {
  const announced: { ws: string; size: number; firstId: string }[] = [];
  store.onCommitted((b) => announced.push({ ws: b.ws, size: b.size, firstId: b.firstId }));
  const a = write(3);
  const b = write(2);
  const over = write(20);
  const seenWhenAnswered = await Promise.all(
    [a, b, over].map(async (w) => {
      const verdict = await store.append({ ws: "ws-announce", env: "development" }, w.ms, w.entries, 10);
      return { stored: verdict.stored, announced: announced.length };
    }),
  );
  // the stored writes were answered after their block was announced; the refused one at once, with nothing announced
  expect(seenWhenAnswered).toEqual([
    { stored: true, announced: 1 },
    { stored: true, announced: 1 },
    { stored: false, announced: 0 },
  ]);
  expect(announced.filter((x) => x.ws === "ws-announce")).toEqual([{ ws: "ws-announce", size: 5, firstId: a.ids[0] }]);
  const big = write(2_500); // three blocks of one write
  await store.append({ ws: "ws-announce", env: "development" }, big.ms, big.entries, -1);
  expect(announced.filter((x) => x.ws === "ws-announce").map((x) => x.size)).toEqual([5, 1_000, 1_000, 500]);
});
