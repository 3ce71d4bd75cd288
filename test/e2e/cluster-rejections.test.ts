// The shipper routes' rejection list in a cluster (contract §11, §13): a front sends a request's rejected entries to
// its workspace's partition log, and the partition's copies list them in log order, so GET /ingest/rejections on any
// node, right after the shipper's answer, lists what every front rejected, newest first, as one process would.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { WS } from "../helpers/sluice.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ partitions: 2 });
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

const esBody = (messages: string[]) => messages.map((m) => `{"create":{}}\n${JSON.stringify({ message: m })}\n`).join("");
const list = async (i: number, key: string) =>
  ((await (await c.call(i, "GET", `${WS}/ingest/rejections`, { key })).json()) as { protocol: string; sample: string }[]).map((r) => r.sample.slice(0, 20));

test("GET /ingest/rejections on any node lists at once what every front rejected, newest first", async () => {
  const ws = await c.workspace("free");
  const key = await ws.key("production", "rw");
  const big = (n: number) => `${n}:${"z".repeat(750)}`; // over the free plan's entry size
  const sent = await c.call(0, "POST", "/es/_bulk", { key, raw: esBody(["fine", big(1)]), headers: { "content-type": "application/x-ndjson" } });
  expect(sent.status).toBe(200);
  for (const i of [1, 2, 0]) expect(await list(i, key)).toEqual([JSON.stringify({ message: big(1) }).slice(0, 20)]);
  for (const i of [2, 1]) {
    const r = await c.call(i, "POST", "/es/_bulk", { key, raw: esBody([big(10 + i)]), headers: { "content-type": "application/x-ndjson" } });
    expect(r.status).toBe(200);
  }
  const newestFirst = [11, 12, 1].map((n) => JSON.stringify({ message: big(n) }).slice(0, 20));
  for (const i of [0, 1, 2]) expect(await list(i, key)).toEqual(newestFirst);
  // the accepted entry is stored once, as in one process
  const stored = (await (await c.call(1, "POST", `${WS}/logs/query`, { key, body: {} })).json()) as { message: string }[];
  expect(stored.map((e) => e.message)).toEqual(["fine"]);
}, 60_000);
