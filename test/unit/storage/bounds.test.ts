// Client time bounds (bounds.ts): each block's earliest and latest client timestamp, stored with it, let a count on
// the client time axis skip the blocks that hold none of its window, and go with the block.
import { afterAll, expect, test } from "bun:test";
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
  while ((await store.deleteBefore(tenant, 8.64e15, 100)) > 0);
  for (const r of refs) expect(store.clientBounds(tenant, r.ms, r.firstId)).toBeUndefined();
});
