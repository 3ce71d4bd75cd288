// A cluster of 3 NATS servers and 3 Sluice nodes (contract §13): writes acknowledged by one node are read on every
// node at once, revocations reach every node within 2 s, the quota is exact across fronts, a node cut off from NATS
// answers 503 and is not ready.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS, type Plan } from "../../src/limits/plans.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { partitionOf } from "../../src/cluster/names.ts";
import type { ClusterNode } from "../../src/cluster/node.ts";
import { rebalance } from "../../src/cluster/ops.ts";
import { clusterStatus, liveNodes } from "../../src/cluster/status.ts";
import { SseReader } from "../helpers/sse.ts";
import { WS, entry } from "../helpers/sluice.ts";

const unlimited = BUILT_IN_PLANS.find((p) => p.code === "unlimited")!;
const Q50: Plan = { ...unlimited, code: "q50", logs_per_month: 50, requests_per_minute: -1, validate_requests_per_minute: -1 };
const R30: Plan = { ...unlimited, code: "r30", requests_per_minute: 30, validate_requests_per_minute: -1 };

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ plans: [...BUILT_IN_PLANS, Q50, R30] });
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

/** everyId pages POST /logs/query on node i and returns every id it lists, in order. */
async function everyId(i: number, key: string, query = ""): Promise<string[]> {
  const ids: string[] = [];
  let cursor: Record<string, string> = {};
  for (let page = 0; page < 1000; page++) {
    const r = await c.call(i, "POST", `${WS}/logs/query`, { key, body: { query, pageSize: 100, ...cursor } });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { id: string }[];
    ids.push(...body.map((e) => e.id));
    const id = r.headers.get("x-next-cursor-id");
    if (!id) return ids;
    cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts")! };
  }
  throw new Error("more than 1000 pages");
}

/** withCopy is `assignment` as the bucket stores it, with one more copy of partition p, on node `id`. */
const withCopy = (assignment: string[][], p: number, id: string) => JSON.stringify(assignment.map((copies, q) => (q === p ? [...copies, id] : copies)));

/** opensThenDrops expects `node` to open its copy of p within 10 s, and to drop it within 10 s of the rebalance that takes it away. */
async function opensThenDrops(node: ClusterNode, p: number): Promise<void> {
  const until = Date.now() + 10_000;
  while (!(p in node.held()) && Date.now() < until) await Bun.sleep(50);
  expect(p in node.held()).toBe(true);
  await rebalance(c.nats.urls);
  while (p in node.held() && Date.now() < until + 10_000) await Bun.sleep(50);
  expect(p in node.held()).toBe(false);
}

describe("cluster", () => {
  test("a write acknowledged by one node is read on every node right after (no stale reads)", async () => {
    const ws = await c.workspace();
    const key = await ws.key("production", "rw");
    for (let i = 0; i < 6; i++) {
      const r = await c.call(i % 3, "POST", `${WS}/logs`, { key, body: entry({ message: `hello ${i}` }) });
      expect(r.status).toBe(201);
      const { id } = (await r.json()) as { id: string };
      for (const j of [0, 1, 2]) {
        const got = await c.call(j, "GET", `${WS}/logs/${id}`, { key });
        expect(got.status).toBe(200);
        expect(((await got.json()) as { message: string }).message).toBe(`hello ${i}`);
      }
    }
  }, 30_000);

  test("the live nodes are the nodes bucket's current beats, each listed once: a deleted beat is not listed", async () => {
    const link = c.nodes[1].link;
    const ids = async () => (await liveNodes(link)).map((n) => n.id);
    expect(await ids()).toEqual(["n0", "n1", "n2"]);
    await link.nodes.put("nz", JSON.stringify({ roles: [], applied: {}, at: Date.now() }));
    expect(await ids()).toEqual(["n0", "n1", "n2", "nz"]);
    await link.nodes.delete("nz");
    expect(await ids()).toEqual(["n0", "n1", "n2"]);
  });

  test("bulk writes through every node are paged exactly once, in the same order, on every node", async () => {
    const ws = await c.workspace();
    const key = await ws.key("production", "rw");
    const sent: string[] = [];
    await Promise.all(
      [0, 1, 2].map(async (i) => {
        for (let b = 0; b < 4; b++) {
          const r = await c.call(i, "POST", `${WS}/logs/bulk`, { key, body: Array.from({ length: 50 }, (_, k) => entry({ action: `n${i}.b${b}.${k}` })) });
          expect(r.status).toBe(201);
          sent.push(...((await r.json()) as { ids: string[] }).ids);
        }
      }),
    );
    const pages = await Promise.all([0, 1, 2].map((i) => everyId(i, key)));
    expect(pages[0].length).toBe(600);
    expect(new Set(pages[0])).toEqual(new Set(sent));
    expect(pages[1]).toEqual(pages[0]);
    expect(pages[2]).toEqual(pages[0]);
  }, 60_000);

  test("a revoked key is refused on every node within 2 s", async () => {
    const ws = await c.workspace();
    const r = await c.admin(1, "POST", `/workspaces/${ws.id}/keys`, { name: "k", environment: "production", type: "rw" });
    const { id, key } = (await r.json()) as { id: string; key: string };
    for (const i of [0, 1, 2]) expect((await c.call(i, "GET", `${WS}/logs`, { key })).status).toBe(200);
    expect((await c.admin(2, "DELETE", `/keys/${id}`)).status).toBeLessThan(300);
    const start = Date.now();
    for (const i of [0, 1, 2]) {
      while ((await c.call(i, "GET", `${WS}/logs`, { key })).status !== 401 && Date.now() - start < 2000) await Bun.sleep(20);
      expect((await c.call(i, "GET", `${WS}/logs`, { key })).status).toBe(401);
    }
    expect(Date.now() - start).toBeLessThan(2000);
  }, 30_000);

  test("the monthly quota is exact when three fronts race: exactly the limit is stored", async () => {
    const ws = await c.workspace("q50");
    const key = await ws.key("production", "rw");
    const statuses = await Promise.all(
      Array.from({ length: 90 }, (_, k) => c.call(k % 3, "POST", `${WS}/logs`, { key, body: entry({ action: `race.${k}` }) }).then((r) => r.status)),
    );
    expect(statuses.filter((s) => s === 201).length).toBe(50);
    expect(statuses.filter((s) => s === 429).length).toBe(40);
    for (const i of [0, 1, 2]) expect((await everyId(i, key)).length).toBe(50);
  }, 60_000);

  test("a read started after a 201 counts that write on any node, though writes past the quota are refused before those ahead of them commit", async () => {
    for (let round = 0; round < 3; round++) {
      const ws = await c.workspace("q50");
      const key = await ws.key("production", "rw");
      let acked = 0;
      let writing = true;
      const writes = Promise.all(
        Array.from({ length: 90 }, (_, k) =>
          c.call(k % 3, "POST", `${WS}/logs`, { key, body: entry({ action: `late.${k}` }) }).then((r) => {
            if (r.status === 201) acked++;
          }),
        ),
      ).finally(() => (writing = false));
      const stale: string[] = [];
      const readers = [0, 1, 2].map(async (i) => {
        while (writing) {
          const floor = acked;
          const { used } = (await (await c.call(i, "GET", `${WS}/usage`, { key })).json()) as { used: number };
          if (used < floor) stale.push(`node ${i} answered used ${used} after ${floor} writes had answered 201`);
        }
      });
      await Promise.all([writes, ...readers]);
      expect(stale).toEqual([]);
      expect(acked).toBe(50);
    }
  }, 60_000);

  test("a live tail on any node, holding a copy or not, gets the entries written through every node, in order", async () => {
    const ws = await c.workspace();
    const key = await ws.key("production", "rw");
    const p = partitionOf(ws.id, c.nodes[0].settings.partitions);
    expect(c.nodes.filter((n) => !n.copyOf(p)).length).toBe(1); // one node relays its tail from a copy
    const tails = await Promise.all([0, 1, 2].map((i) => c.call(i, "GET", `${WS}/logs/tail`, { key })));
    for (const t of tails) expect(t.status).toBe(200);
    const readers = tails.map((t) => new SseReader(t.body!));
    const sent: string[] = [];
    for (const i of [0, 1, 2]) {
      const r = await c.call(i, "POST", `${WS}/logs`, { key, body: entry({ message: `tailed ${i}` }) });
      sent.push(((await r.json()) as { id: string }).id);
    }
    for (const reader of readers) {
      const got: string[] = [];
      for (let k = 0; k < 3; k++) {
        const ev = await reader.next(5000);
        if (ev?.event === "entry") got.push((JSON.parse(ev.data) as { id: string }).id);
      }
      expect(got).toEqual([...sent].sort());
      await reader.close();
    }
  }, 30_000);

  test("a plan's requests per minute are shared among the live front nodes: each node allows its third", async () => {
    const until = Date.now() + 10_000;
    while (!c.nodes.every((n) => n.liveFronts === 3) && Date.now() < until) await Bun.sleep(100);
    expect(c.nodes.map((n) => n.liveFronts)).toEqual([3, 3, 3]);
    const ws = await c.workspace("r30");
    const key = await ws.key("production", "rw");
    const statuses: number[] = [];
    for (let k = 0; k < 12; k++) statuses.push((await c.call(0, "POST", `${WS}/logs`, { key, body: entry() })).status);
    expect(statuses).toEqual([...Array(10).fill(201), 429, 429]);
    expect((await c.call(1, "POST", `${WS}/logs`, { key, body: entry() })).status).toBe(201); // another front has its own share
  }, 30_000);

  test("a node cut off from NATS answers writes 503 with Retry-After and is not ready; it is ready again once NATS is back", async () => {
    const ws = await c.workspace();
    const key = await ws.key("production", "rw");
    const lone = await c.addNode(["front", "query"], [c.nats.urls[2]]);
    const i = c.nodes.indexOf(lone);
    expect((await c.call(i, "POST", `${WS}/logs`, { key, body: entry() })).status).toBe(201);
    expect((await c.call(i, "GET", "/readyz")).status).toBe(200);
    c.nats.kill9(2);
    const until = Date.now() + 5000;
    while ((await c.call(i, "GET", "/readyz")).status !== 503 && Date.now() < until) await Bun.sleep(50);
    expect((await c.call(i, "GET", "/readyz")).status).toBe(503);
    const refused = await c.call(i, "POST", `${WS}/logs`, { key, body: entry({ message: "never stored" }) });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBeTruthy();
    expect(((await refused.json()) as { error_code: string }).error_code).toBe("INTERNAL_LOG_SERVICE_ERROR");
    expect((await c.call(i, "POST", `${WS}/logs/query`, { key, body: {} })).status).toBe(503);
    // the other nodes work on (one connected to the killed server reconnects to another), and never see the refused entry
    const ask = () => c.call(0, "POST", `${WS}/logs/query`, { key, body: { query: "message@never" } });
    const within = Date.now() + 20_000;
    let other = await ask();
    while (other.status !== 200 && Date.now() < within) {
      await Bun.sleep(100);
      other = await ask();
    }
    expect(await other.json()).toEqual([]);
    await c.nats.start(2);
    const back = Date.now() + 15_000;
    while ((await c.call(i, "GET", "/readyz")).status !== 200 && Date.now() < back) await Bun.sleep(100);
    expect((await c.call(i, "GET", "/readyz")).status).toBe(200);
    // a barrier for the tests after: the restarted server serves the streams and buckets again (a node connecting to it
    // first got "no responders" for its first beat in CI while it caught up)
    const settled = Date.now() + 30_000;
    while (
      !(await clusterStatus([c.nats.urls[2]], { monitors: [], settleMs: 0 }).then(
        () => true,
        () => false,
      )) &&
      Date.now() < settled
    )
      await Bun.sleep(200);
  }, 90_000);

  test("a storage node added by rebalance starts its copies from a peer's backup and consumes on from its sequence", async () => {
    // workspaces until every partition has writes (each is then worth a backup)
    const keys: string[] = [];
    const written = new Set<number>();
    const partitions = c.nodes[0].settings.partitions;
    for (let w = 0; w < 60 && written.size < partitions; w++) {
      const ws = await c.workspace();
      const p = partitionOf(ws.id, partitions);
      if (written.has(p)) continue;
      written.add(p);
      const key = await ws.key("production", "rw");
      keys.push(key);
      expect((await c.call(w % 3, "POST", `${WS}/logs/bulk`, { key, body: [entry({ message: `before ${w}` }), entry()] })).status).toBe(201);
    }
    expect(written.size).toBe(partitions);
    const added = await c.addNode();
    // rebalance lists the live nodes from the bucket, which a replica may serve a moment behind the new node's first beat
    let mine: number[] = [];
    for (const until = Date.now() + 10_000; mine.length === 0 && Date.now() < until; await Bun.sleep(200)) {
      const { assignment } = await rebalance(c.nats.urls);
      mine = assignment.flatMap((nodes, p) => (nodes.includes(added.options.nodeId) ? [p] : []));
    }
    expect(mine.length).toBeGreaterThan(0);
    // a copy from a backup waits up to 30 s for a peer's backup (backup.ts); a loaded machine has taken over 20 s
    const until = Date.now() + 45_000;
    while (!mine.every((p) => p in added.held()) && Date.now() < until) await Bun.sleep(50);
    expect([...added.restored].sort()).toEqual(mine.sort()); // every partition has writes, so each copy here came from a backup
    const i = c.nodes.indexOf(added);
    for (const key of keys) {
      expect((await c.call(i, "POST", `${WS}/logs`, { key, body: entry({ message: "after" }) })).status).toBe(201);
      const here = await everyId(i, key);
      expect(here.length).toBe(3);
      expect(here).toEqual(await everyId(0, key));
    }
  }, 90_000);

  test("a node whose pass over one stored assignment failed still applies the next one", async () => {
    const { assignment } = await rebalance(c.nats.urls);
    const node = c.nodes.find((n) => n.options.roles.includes("storage") && assignment.some((copies) => !copies.includes(n.options.nodeId)))!;
    const p = assignment.findIndex((copies) => !copies.includes(node.options.nodeId));
    const bucket = c.nodes[0].link.cluster;
    await bucket.put("assign", "[not an assignment"); // every node's pass over it throws, as one NATS did not answer would
    await Bun.sleep(500);
    await bucket.put("assign", withCopy(assignment, p, node.options.nodeId));
    await opensThenDrops(node, p);
  }, 40_000);

  test("a node whose watch missed a stored assignment applies it within 5 s all the same", async () => {
    const { assignment } = await rebalance(c.nats.urls);
    const node = c.nodes.find((n) => assignment.some((copies) => !copies.includes(n.options.nodeId)))!;
    const p = assignment.findIndex((copies) => !copies.includes(node.options.nodeId));
    (node as unknown as { stopWatch(): void }).stopWatch(); // as a watch whose consumer stalled delivers nothing
    await c.nodes[0].link.cluster.put("assign", withCopy(assignment, p, node.options.nodeId));
    await opensThenDrops(node, p);
  }, 40_000);
});
