// The Loki tail on a cluster (contract §17, §13): a WebSocket on a front that holds no copy is answered by the copy that
// answers its partition's live tails, relayed over NATS; entries pushed through another node before it opened come
// from storage, later ones live, each once, in order. Real nats-server processes, nodes listening on loopback.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ClusterNode } from "../../src/cluster/node.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";

let c: TestCluster;
let edge: ClusterNode;
let dir: string;
let base = "";
beforeAll(async () => {
  c = await startTestCluster({ partitions: 2 });
  dir = mkdtempSync(join(tmpdir(), "sluice-edge-"));
  // a front that holds no copy: every tail it takes is relayed from another node
  edge = await ClusterNode.start({ ...c.nodes[0].options, nodeId: "edge", roles: ["front", "query"], dataDir: dir });
  const app = edge.front.app.onRequest(({ request }) => edge.before(request)).listen({ hostname: "127.0.0.1", port: 0 });
  base = `ws://127.0.0.1:${app.server!.port}`;
}, 60_000);
afterAll(async () => {
  await edge?.front.app.stop(true);
  await edge?.stop();
  await c?.close();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

const T0 = Date.now() - 60_000;

/** push sends Loki push lines with client times T0 + offset ms through node i. */
async function push(i: number, key: string, lines: [number, string][]) {
  const values = lines.map(([offset, line]) => [`${(T0 + offset) * 1_000_000}`, line]);
  const r = await c.call(i, "POST", "/loki/api/v1/push", { key, body: { streams: [{ stream: { app: "ct" }, values }] } });
  expect(r.status).toBe(204);
}

function tail(key: string, params: Record<string, string>) {
  const got: string[] = [];
  const socket = new WebSocket(`${base}/loki/api/v1/tail?${new URLSearchParams(params)}`, { headers: { "x-api-key": key } } as unknown as string[]);
  const opened = new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error("the tail did not open"));
  });
  socket.onmessage = (m) => {
    for (const st of JSON.parse(String(m.data)).streams) got.push(...st.values.map((v: [string, string]) => v[1]));
  };
  const until = async (n: number) => {
    for (let waited = 0; got.length < n && waited < 10_000; waited += 20) await Bun.sleep(20);
    await Bun.sleep(200); // nothing more, nothing twice
    return [...got];
  };
  return { opened, until, close: () => socket.close() };
}

test("a Loki tail on a front holding no copy: what was pushed through another node from start, then live pushes, each once, in order", async () => {
  const key = await (await c.workspace()).key("production", "rw");
  await push(0, key, [
    [-1, "before start"],
    [0, "s1"],
    [5, "skip me"],
    [10, "s2"],
  ]);
  const t = tail(key, { query: '{app="ct"} != "skip"', start: `${T0}000000` });
  await t.opened;
  expect(await t.until(2)).toEqual(["s1", "s2"]);
  await push(1, key, [[20, "live1"]]);
  await push(2, key, [
    [30, "live2"],
    [31, "skip again"],
    [32, "live3"],
  ]);
  expect(await t.until(5)).toEqual(["s1", "s2", "live1", "live2", "live3"]);
  t.close();
  // a reconnect with start at the last entry's time misses none
  const again = tail(key, { query: '{app="ct"} != "skip"', start: `${T0 + 30}000000` });
  await again.opened;
  expect(await again.until(2)).toEqual(["live2", "live3"]);
  again.close();
}, 60_000);

test("a write acknowledged just before the tail opens is in it, whichever node took it", async () => {
  const key = await (await c.workspace()).key("production", "rw");
  for (let i = 0; i < 3; i++) {
    await push(i, key, [[100 + i, `w${i}`]]);
    const t = tail(key, { query: '{app="ct"}', start: `${T0 + 100}000000` });
    await t.opened;
    expect(await t.until(i + 1)).toEqual(Array.from({ length: i + 1 }, (_, j) => `w${j}`));
    t.close();
  }
}, 60_000);

test("the route a front relays a Loki tail through answers no client: 404", async () => {
  const key = await (await c.workspace()).key("production", "rw");
  const r = await c.call(0, "GET", `/loki/api/v1/tail/relayed?query=${encodeURIComponent('{app="ct"}')}`, { key });
  expect(r.status).toBe(404);
});
