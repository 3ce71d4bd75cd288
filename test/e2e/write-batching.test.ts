// Write batching (contract §1, §4): single-entry writes of one event-loop turn are stored together in shared
// blocks, yet each is answered with its own entry, read back by id, and found exactly by every index.
import { afterAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS } from "../helpers/sluice.ts";

const json = (res: Response): Promise<any> => res.json();
const NOW = Date.parse("2026-11-22T08:00:00.000Z");
const s = startTestSluice(undefined, { clock: () => NOW, ipRatePerMinute: -1 }); // one millisecond: every write may share a block
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

test("concurrent single-entry writes share blocks, and each is readable by id, by every index and by full text", async () => {
  const workspace = await s.workspace();
  const key = await workspace.key("development", "rw");
  const n = 120;
  const sent = Array.from({ length: n }, (_, i) =>
    entry({ level: i % 3 === 0 ? "error" : "info", action: `batch.step${i % 4}`, tags: [`t${i % 5}`], message: `word${i} shared` }),
  );
  const created = await Promise.all(
    sent.map(async (body) => {
      const res = await s.call("POST", `${WS}/logs`, { key, body });
      expect(res.status).toBe(201);
      return json(res);
    }),
  );
  const blocks = s.svc.entries.countBlocks({ ws: workspace.id, env: "development" }, { fromMs: 0, toMs: 8.64e15 }, 1_000).n;
  expect(blocks).toBeLessThan(n); // they were batched

  // newest first: one millisecond, so by id descending
  const order = created
    .map((c) => c.id)
    .sort()
    .reverse();
  const query = async (q: string) =>
    (await json(await s.call("POST", `${WS}/logs/query`, { key, body: { query: q, pageSize: 100 } }))).map((e: { id: string }) => e.id);
  const expectMatch = (pred: (i: number) => boolean) => order.filter((id) => pred(created.findIndex((c) => c.id === id))).slice(0, 100);
  for (let i = 0; i < n; i += 17) {
    const got = await json(await s.call("GET", `${WS}/logs/${created[i].id}`, { key }));
    expect(got).toEqual(created[i]);
    expect(await query(`word${i}`)).toEqual([created[i].id]);
  }
  expect(await query("level=error")).toEqual(expectMatch((i) => i % 3 === 0));
  expect(await query("tag=t2")).toEqual(expectMatch((i) => i % 5 === 2));
  expect(await query("action=batch.step1")).toEqual(expectMatch((i) => i % 4 === 1));
  expect((await json(await s.call("GET", `${WS}/usage`, { key }))).used).toBe(n);
});

test("single writes handled in one event-loop turn share one receipt time, and so one block, though the clock moves on between them", async () => {
  let reads = 0;
  const moving = startTestSluice(undefined, { clock: () => NOW + reads++, ipRatePerMinute: -1 }); // each reading 1 ms later
  const workspace = await moving.workspace();
  const key = await workspace.key("development", "rw");
  const before = reads;
  const created = await Promise.all(
    Array.from({ length: 40 }, async (_, i) => json(await moving.call("POST", `${WS}/logs`, { key, body: entry({ message: `turn${i}` }) }))),
  );
  const stamps = new Set(created.map((c) => Date.parse(c.server_timestamp)));
  expect(stamps.size).toBe(1);
  const [stamp] = stamps;
  expect(stamp).toBeGreaterThanOrEqual(NOW + before); // a reading taken while the turn handled them
  expect(stamp).toBeLessThan(NOW + reads);
  expect(moving.svc.entries.countBlocks({ ws: workspace.id, env: "development" }, { fromMs: 0, toMs: 8.64e15 }, 1_000).n).toBe(1);
  await moving.close();
  removeDir(moving.dir);
});
