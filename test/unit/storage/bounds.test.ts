// Client time bounds (bounds.ts): each block's earliest and latest client timestamp, stored with it, let a count on
// the client time axis skip the blocks that hold none of its window, and go with the block.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../../src/ids.ts";
import { openDatabases } from "../../../src/storage/db.ts";
import { type Entry, EntryStore } from "../../../src/storage/entries.ts";
import { INDEX_LAYOUT } from "../../../src/storage/layout.ts";
import { UsageStore } from "../../../src/storage/usage.ts";
import { removeDir, startTestSluice, WS } from "../../helpers/sluice.ts";

const s = startTestSluice();
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const DAY = 86_400_000;
const T0 = Date.UTC(2026, 9, 1);
/** a batch of 300 entries whose client times fall on day `d` after T0, in scrambled order */
const batch = (d: number) =>
  Array.from({ length: 300 }, (_, i) => ({
    action: "a.b",
    level: "info",
    message: `day ${d} entry ${i}`,
    clientTimestamp: new Date(T0 + d * DAY + ((i * 7919) % 300) * 1000).toISOString(),
  }));

test("a block's client time bounds are its entries' earliest and latest client timestamps, and a client-axis count and a query's client_timestamp window read only the blocks that may hold it", async () => {
  const ws = await s.workspace();
  const key = await ws.key("production", "rw");
  for (const d of [0, 5, 10]) expect((await s.call("POST", `${WS}/logs/bulk`, { key, body: batch(d) })).status).toBe(201);
  const tenant = { ws: ws.id, env: "production" as const };
  const refs = [...s.svc.entries.blocks(tenant, { fromMs: 0, toMs: 8.64e15 })];
  expect(refs.length).toBe(3);
  const days = refs.map((r) => {
    const [lo, hi] = s.svc.entries.clientBounds(tenant, r.ms, r.firstId)!;
    expect(hi - lo).toBe(299_000);
    return Math.round((lo - T0) / DAY);
  });
  expect(days.sort((a, b) => a - b)).toEqual([0, 5, 10]);

  const store = s.svc.entries;
  const read = store.readBlockTransient.bind(store);
  let reads = 0;
  store.readBlockTransient = (...args) => {
    reads++;
    return read(...args);
  };
  try {
    const hits = await s.call("POST", `${WS}/logs/hits`, {
      key,
      body: { from: new Date(T0 + 5 * DAY).toISOString(), to: new Date(T0 + 6 * DAY).toISOString(), step: "1d", axis: "client", query: "day" },
    });
    expect(hits.status).toBe(200);
    expect(((await hits.json()) as { total: number }).total).toBe(300);
    expect(reads).toBe(1);
  } finally {
    store.readBlockTransient = read;
  }
  const blocksRead = new Set<string>();
  store.readBlockTransient = (...args) => {
    blocksRead.add(`${args[1]}/${args[2]}`);
    return read(...args);
  };
  const readOf = store.readBlock.bind(store);
  store.readBlock = (...args) => {
    blocksRead.add(`${args[1]}/${args[2]}`);
    return readOf(...args);
  };
  try {
    const window = `client_timestamp>=${new Date(T0 + 5 * DAY).toISOString()} client_timestamp<${new Date(T0 + 6 * DAY).toISOString()}`;
    const page = await s.call("POST", `${WS}/logs/query`, { key, body: { query: `${window} day`, pageSize: 100 } });
    expect({ status: page.status, body: page.status === 200 ? "" : await page.text() }).toEqual({ status: 200, body: "" });
    const found = (await page.json()) as { message: string }[];
    expect(found.length).toBe(100);
    expect(found.every((e) => e.message.startsWith("day 5 "))).toBe(true);
    expect(blocksRead.size).toBe(1);
  } finally {
    store.readBlockTransient = read;
    store.readBlock = readOf;
  }
  // refs are newest first, written on days 0, 5, 10: the oldest block reaching a client time
  const named = (r: { ms: number; firstId: string } | null | undefined) => r && { ms: r.ms, firstId: r.firstId };
  expect(named(store.oldestReaching(tenant, T0 + 5 * DAY))).toEqual(named(refs[1]));
  expect(named(store.oldestReaching(tenant, T0 + 5 * DAY + 299_000))).toEqual(named(refs[1])); // its latest: reached
  expect(named(store.oldestReaching(tenant, T0 + 5 * DAY + 299_001))).toEqual(named(refs[0]));
  expect(named(store.oldestReaching(tenant, T0))).toEqual(named(refs[2]));
  expect(store.oldestReaching(tenant, T0 + 11 * DAY)).toBeNull();
  expect(store.oldestReaching(tenant, T0, 2)).toBeUndefined(); // three blocks reach it: more than read
  expect(named(store.oldestReaching(tenant, T0, 3))).toEqual(named(refs[2]));
  while ((await store.deleteBefore(tenant, 8.64e15, 100)) > 0);
  for (const r of refs) expect(store.clientBounds(tenant, r.ms, r.firstId)).toBeUndefined();
  expect(store.oldestReaching(tenant, Number.NEGATIVE_INFINITY)).toBeNull();
});

test("a data directory of index layout 6 gets its blocks listed by their latest client time at open", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-bounds-"));
  try {
    const first = openDatabases(dir, () => {});
    const store = new EntryStore(first, new UsageStore(first.usage));
    const tenant = { ws: "ws-bounds", env: "production" as const };
    const ids = new IdGenerator();
    for (const d of [0, 5]) {
      const { ms, ids: fresh } = ids.next(3, T0 + d * DAY);
      const entries = fresh.map(
        (id, i): Entry => ({
          id,
          level: "info",
          action: "a.b",
          message: null,
          tags: [],
          actor: null,
          target: null,
          context: null,
          metadata: null,
          clientMs: T0 + d * DAY + i,
        }),
      );
      await store.append(tenant, ms, entries, -1);
    }
    await store.settled();
    const newest = [...store.blocks(tenant, { fromMs: 0, toMs: 8.64e15 })][0];
    // what layout 6 had: the bounds alone (the by-latest keys are the ones starting with a number)
    for (const k of first.bounds.getKeys({ end: [""] })) first.bounds.removeSync(k);
    expect(store.oldestReaching(tenant, T0)).toBeNull();
    first.layout.putSync("indexes", 6);
    await first.root.close();
    const again = openDatabases(dir, () => {});
    expect(again.layout.get("indexes")).toBe(INDEX_LAYOUT);
    const reopened = new EntryStore(again, new UsageStore(again.usage));
    expect(reopened.oldestReaching(tenant, T0 + 5 * DAY)).toEqual({ ms: newest.ms, firstId: newest.firstId });
    await reopened.settled();
    await again.root.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
