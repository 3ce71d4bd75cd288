// Live tail bounds on a cluster (contract §10, §13): a tail answered by another node's copy is relayed over NATS
// with a window, so a slow consumer still gets `event: overflow`; and a partition's tails go to one copy, so a key's
// open tails are counted together whichever node each was opened on.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { ClusterNode } from "../../src/cluster/node.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { SseReader } from "../helpers/sse.ts";
import { WS, entry } from "../helpers/sluice.ts";

let c: TestCluster;
/** a front that holds no copy: every tail it opens is relayed from another node's */
let relaying: ClusterNode;
let relayingAt: number;
beforeAll(async () => {
  c = await startTestCluster({ partitions: 2, app: { tail: { bufferBytes: 8 * 1024, maxPerKey: 2 } } });
  relaying = await c.addNode(["front", "query"]);
  relayingAt = c.nodes.indexOf(relaying);
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

const tail = (i: number, key: string, params = "") => c.call(i, "GET", `${WS}/logs/tail${params ? `?${params}` : ""}`, { key });
async function bulk(key: string, messages: string[]) {
  const r = await c.call(0, "POST", `${WS}/logs/bulk`, { key, body: messages.map((message) => entry({ message })) });
  expect(r.status).toBe(201);
}

test("a tail relayed from another node's copy to a consumer too slow gets event: overflow, and resuming from its cursor loses nothing", async () => {
  const key = await (await c.workspace()).key("development", "rw");
  const r = await tail(relayingAt, key);
  expect(r.status).toBe(200);
  // nobody reads meanwhile: 1 MB of events, far past what the relay's window, the tail's buffer and the sockets hold
  const pad = " ".padEnd(1000, "x");
  for (let i = 0; i < 10; i++)
    await bulk(
      key,
      Array.from({ length: 100 }, (_, n) => `m${i * 100 + n}${pad}`),
    );
  await Bun.sleep(200);
  const sse = new SseReader(r.body!);
  const got: string[] = [];
  let overflow: string | undefined;
  const name = (data: string) => (JSON.parse(data).message as string).split(" ")[0];
  for (let ev = await sse.next(); ev; ev = await sse.next()) {
    if (ev.event === "overflow") overflow = JSON.parse(ev.data).cursor;
    else got.push(name(ev.data));
  }
  expect(sse.ended).toBe(true);
  expect(overflow).toBeDefined();
  expect(got.length).toBeLessThan(1000);
  const rest = await tail(relayingAt, key, `after=${encodeURIComponent(overflow!)}`);
  const resumed = new SseReader(rest.body!);
  const more = await resumed.take(1000 - got.length);
  expect([...got, ...more.map((e) => name(e.data))]).toEqual(Array.from({ length: 1000 }, (_, n) => `m${n}`));
  await resumed.close();
});

test("a key's open tails are counted together whichever node each was opened on: past SLUICE_TAIL_MAX_PER_KEY every node answers 429", async () => {
  const key = await (await c.workspace()).key("development", "rw");
  const a = await tail(0, key);
  const b = await tail(relayingAt, key);
  expect([a.status, b.status]).toEqual([200, 200]);
  for (let i = 0; i < c.nodes.length; i++) {
    const r = await tail(i, key);
    expect([i, r.status, ((await r.json()) as { error_code: string }).error_code]).toEqual([i, 429, "RATE_LIMIT_PLAN_EXCEEDED"]);
  }
  await a.body!.cancel();
  const until = Date.now() + 5000;
  let again = await tail(2, key);
  while (again.status === 429 && Date.now() < until) {
    await Bun.sleep(50);
    again = await tail(2, key);
  }
  expect(again.status).toBe(200);
  await Promise.all([b.body!.cancel(), again.body!.cancel()]);
});
