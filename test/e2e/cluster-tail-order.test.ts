// Live tails across fronts whose clocks differ (contract §10, §13): a tail sends in (server_timestamp, id) order and
// resumes from a cursor, so an entry stored after one with a later key would be passed over. Each tenant's keys rise
// in log order: a write whose key is not above the last one applied is stored by the copies re-keyed above it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode } from "../../src/cluster/node.ts";
import { uuidTimeMs } from "../../src/ids.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { SseReader } from "../helpers/sse.ts";
import { WS, entry } from "../helpers/sluice.ts";

const LAG_MS = 5000;
let c: TestCluster;
let lagging: ClusterNode;
let dir: string;
beforeAll(async () => {
  c = await startTestCluster({ partitions: 2 });
  dir = mkdtempSync(join(tmpdir(), "sluice-lagging-"));
  // a front whose clock is 5 s behind the others'
  lagging = await ClusterNode.start({ ...c.nodes[0].options, nodeId: "lagging", roles: ["front", "query"], dataDir: dir, clock: () => Date.now() - LAG_MS });
}, 60_000);
afterAll(async () => {
  await lagging?.stop();
  await c?.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

const post = (node: ClusterNode, key: string, path: string, body: unknown) =>
  node.handle(
    new Request(`http://localhost${WS}${path}`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );

type Wire = { id: string; server_timestamp: string };

test("a live tail gets an entry written through a front whose clock lags, after the entries before it, and its cursor resumes past it", async () => {
  const ws = await c.workspace();
  const key = await ws.key("production", "rw");
  const tail = await c.call(0, "GET", `${WS}/logs/tail`, { key });
  expect(tail.status).toBe(200);
  const reader = new SseReader(tail.body!);

  const early = (await (await post(c.nodes[1], key, "/logs", entry({ message: "on time" }))).json()) as Wire;
  const late = await post(lagging, key, "/logs", entry({ message: "from the lagging front" }));
  expect(late.status).toBe(201);
  const lateEntry = (await late.json()) as Wire;
  const bulk = await post(lagging, key, "/logs/bulk", [entry({ message: "bulk 1" }), entry({ message: "bulk 2" })]);
  expect(bulk.status).toBe(201);
  const bulkIds = ((await bulk.json()) as { ids: string[] }).ids;

  const events = (await reader.take(4, 10_000)).filter((e) => e.event === "entry").map((e) => ({ cursor: e.id, entry: JSON.parse(e.data) as Wire }));
  await reader.close();
  expect(events.map((e) => e.entry.id)).toEqual([early.id, lateEntry.id, ...bulkIds]);
  // what the front answered is what is stored: the key above the entry before it, an id whose time is its timestamp
  const stored = (await (await c.call(2, "GET", `${WS}/logs/${lateEntry.id}`, { key })).json()) as Wire;
  expect(stored).toEqual(lateEntry);
  expect(lateEntry.server_timestamp).toBe(early.server_timestamp); // just after the entry before it: its millisecond, a later id
  expect(lateEntry.id > early.id).toBe(true);
  expect(uuidTimeMs(lateEntry.id)).toBe(Date.parse(lateEntry.server_timestamp));
  // paging lists them newest first, in the tail's order reversed
  const page = (await (await c.call(0, "POST", `${WS}/logs/query`, { key, body: {} })).json()) as Wire[];
  expect(page.map((e) => e.id)).toEqual([...bulkIds].reverse().concat([lateEntry.id, early.id]));
  // a tail resuming from the cursor of the early entry gets the late ones, once
  const resumed = await c.call(2, "GET", `${WS}/logs/tail`, { key, headers: { "last-event-id": events[0].cursor! } });
  const again = new SseReader(resumed.body!);
  const after = (await again.take(3, 10_000)).filter((e) => e.event === "entry").map((e) => (JSON.parse(e.data) as Wire).id);
  await again.close();
  expect(after).toEqual([lateEntry.id, ...bulkIds]);
}, 60_000);

test("a live tail gets every entry of writes racing through four fronts, one of them lagging, in key order, as paging lists them", async () => {
  const ws = await c.workspace();
  const key = await ws.key("production", "rw");
  const tail = await c.call(1, "GET", `${WS}/logs/tail`, { key });
  const reader = new SseReader(tail.body!);
  const fronts = [...c.nodes, lagging];
  const sent: string[] = [];
  for (let round = 0; round < 20; round++) {
    // one write through each front at once, a round after another: the tail has sent the earlier rounds meanwhile
    const answers = await Promise.all(
      fronts.map((front, f) =>
        (round + f) % 2 === 0
          ? post(front, key, "/logs", entry({ message: `race ${round}.${f}` })).then(async (r) => [((await r.json()) as Wire).id])
          : post(front, key, "/logs/bulk", [entry({ message: `race ${round}.${f}a` }), entry({ message: `race ${round}.${f}b` })]).then(
              async (r) => ((await r.json()) as { ids: string[] }).ids,
            ),
      ),
    );
    sent.push(...answers.flat());
  }
  expect(sent.length).toBe(120);
  const got: { cursor: string; id: string }[] = [];
  while (got.length < sent.length) {
    const e = await reader.next(10_000);
    if (!e) break;
    if (e.event === "entry") got.push({ cursor: e.id!, id: (JSON.parse(e.data) as Wire).id });
  }
  await reader.close();
  expect(new Set(got.map((g) => g.id))).toEqual(new Set(sent));
  const ids: string[] = [];
  let cursor: Record<string, string> = {};
  for (let page = 0; page < 10; page++) {
    const r = await c.call(2, "POST", `${WS}/logs/query`, { key, body: { pageSize: 100, ...cursor } });
    ids.push(...((await r.json()) as Wire[]).map((e) => e.id));
    const id = r.headers.get("x-next-cursor-id");
    if (!id) break;
    cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts")! };
  }
  expect(got.map((g) => g.id)).toEqual(ids.reverse());
}, 60_000);
