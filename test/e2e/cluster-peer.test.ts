// Reads a node forwards to another node's copy (contract §13) go straight to that node over HTTP, proved by the
// cluster's peer secret; a peer that cannot be reached is asked through NATS. Without the secret the peer path is an
// unknown path, and a peer's body that is no relayed read is refused.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { partitionOf } from "../../src/cluster/names.ts";
import { PEER_READ_PATH } from "../../src/cluster/peer.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { WS, entry } from "../helpers/sluice.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster();
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

/** written makes a workspace with 30 entries and names the nodes holding a copy of its partition and one forwarding. */
async function written() {
  const ws = await c.workspace();
  const key = await ws.key("production", "rw");
  const r = await c.call(0, "POST", `${WS}/logs/bulk`, { key, body: Array.from({ length: 30 }, (_, i) => entry({ message: `peer ${i}` })) });
  expect(r.status).toBe(201);
  const p = partitionOf(ws.id, 4);
  const holders = c.nodes.flatMap((n, i) => (p in n.held() ? [i] : []));
  const forwarding = c.nodes.findIndex((n) => !(p in n.held()));
  expect(forwarding).toBeGreaterThanOrEqual(0);
  return { key, p, holders, forwarding };
}

const page = async (i: number, key: string) => {
  const r = await c.call(i, "POST", `${WS}/logs/query`, { key, body: { query: "message@peer", pageSize: 50 } });
  expect(r.status).toBe(200);
  return r.json();
};

test("a forwarding node posts the read straight to a node holding a copy, and answers what that copy answers", async () => {
  const { key, holders, forwarding } = await written();
  const expected = await page(holders[0], key);
  expect((expected as unknown[]).length).toBe(30);
  // a barrier: a node learns its peers' addresses from their beats, read every NODE_BEAT_MS; till then it asks NATS
  const known = Date.now() + 10_000;
  const http = c.nodes[forwarding].reads.forwarded.http;
  while (c.nodes[forwarding].reads.forwarded.http === http && Date.now() < known) await page(forwarding, key);
  const before = { ...c.nodes[forwarding].reads.forwarded };
  for (let i = 0; i < 5; i++) expect(await page(forwarding, key)).toEqual(expected);
  const after = c.nodes[forwarding].reads.forwarded;
  expect(after.http - before.http).toBe(5);
  expect(after.nats - before.nats).toBe(0);
}, 30_000);

test("a forwarding node whose peers cannot be reached over HTTP forwards through NATS, with the same answer", async () => {
  const { key, holders, forwarding } = await written();
  const expected = await page(holders[0], key);
  for (const h of holders) c.nodes[h].advertise("http://127.0.0.1:1"); // nothing listens there
  // the forwarding node reads the new addresses with its next beat
  const until = Date.now() + 15_000;
  let before = { ...c.nodes[forwarding].reads.forwarded };
  while (Date.now() < until) {
    before = { ...c.nodes[forwarding].reads.forwarded };
    expect(await page(forwarding, key)).toEqual(expected);
    if (c.nodes[forwarding].reads.forwarded.nats > before.nats) break;
    await Bun.sleep(200);
  }
  before = { ...c.nodes[forwarding].reads.forwarded };
  for (let i = 0; i < 5; i++) expect(await page(forwarding, key)).toEqual(expected);
  const after = c.nodes[forwarding].reads.forwarded;
  expect(after.nats - before.nats).toBe(5);
  expect(after.http - before.http).toBe(0);
  for (const h of holders) c.nodes[h].advertise(c.addresses[h]);
}, 40_000);

test("the peer path without the cluster's secret is an unknown path; with it, a body that is no relayed read is refused 400", async () => {
  const { p, holders } = await written();
  const url = `${c.addresses[holders[0]]}${PEER_READ_PATH}${p}`;
  const secret = (await c.nodes[0].link.peerSecret())!;
  const tries: Record<string, string>[] = [{}, { "x-sluice-peer": "guess" }, { "x-sluice-peer": `${secret}x` }];
  for (const headers of tries) {
    const r = await fetch(url, { method: "POST", headers, body: new Uint8Array([0x80]) });
    expect(r.status).toBe(404);
  }
  await fc.assert(
    fc.asyncProperty(fc.uint8Array({ maxLength: 200 }), async (body) => {
      const r = await fetch(url, { method: "POST", headers: { "x-sluice-peer": secret }, body });
      expect(r.status).toBe(400);
      await r.arrayBuffer();
    }),
    { numRuns: 100 },
  );
}, 30_000);

test("a node of a cluster made before the peer secret forwards every read through NATS, with the same answer", async () => {
  const { key, holders } = await written();
  const bucket = c.nodes[0].link.cluster;
  const secret = (await c.nodes[0].link.peerSecret())!;
  await bucket.delete("peer-secret");
  try {
    const lone = await c.addNode(["front", "query"]);
    const expected = await page(holders[0], key);
    const i = c.nodes.indexOf(lone);
    for (let k = 0; k < 3; k++) expect(await page(i, key)).toEqual(expected);
    expect(lone.reads.forwarded).toEqual({ http: 0, nats: 3 });
  } finally {
    await bucket.put("peer-secret", secret);
  }
}, 30_000);
