// Trimming the partition streams (trim.ts): a stream is purged below what every assigned copy has applied; reads,
// tails from a cursor and new copies still get every entry; a copy that is down holds its partition's trimming
// back, and catches up from the stream when it starts again; a copy left from an earlier assignment that the stream
// was trimmed past starts again from a peer's backup.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { ClusterNode } from "../../src/cluster/node.ts";
import { partitionOf, streamOf } from "../../src/cluster/names.ts";
import { rebalance } from "../../src/cluster/ops.ts";
import { clusterStatus, liveNodes } from "../../src/cluster/status.ts";
import { StreamTrimmer } from "../../src/cluster/trim.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { SseReader } from "../helpers/sse.ts";
import { WS, entry } from "../helpers/sluice.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ partitions: 2, copies: 2 });
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

const P = 2;
/** a copy from a backup waits for a peer's backup up to 30 s (backup.ts), asking again 5 s after a miss */
const BACKUP_WAIT_MS = 45_000;
const nodeNamed = (id: string) => c.nodes.filter((n) => n.options.nodeId === id).at(-1)!;
const stream = async (p: number) => (await c.nodes[0].link.jsm.streams.info(streamOf(p))).state;
/** trimNow runs a trimming pass (with no age window) as the node first in partition p's assignment runs it */
async function trimNow(p: number) {
  const first = (await c.nodes[0].link.assignment(P))[p][0];
  const node = nodeNamed(first);
  return (await new StreamTrimmer(node.link, node.settings, first, () => node.held(), 0).trim()).find((t) => t.partition === p)!;
}
/** settled waits until every assigned copy of p has applied the stream's last sequence, as its node's heartbeat says */
async function settled(p: number): Promise<number> {
  const until = Date.now() + 15_000;
  for (;;) {
    const { last_seq: last } = await stream(p);
    const nodes = await liveNodes(c.nodes[0].link);
    const copies = (await c.nodes[0].link.assignment(P))[p];
    if (copies.every((id) => nodes.find((n) => n.id === id)?.applied[p] === last)) return last;
    if (Date.now() > until) throw new Error(`the copies of partition ${p} did not apply ${last} within 15 s`);
    await Bun.sleep(100);
  }
}
async function everyId(node: ClusterNode, key: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: Record<string, string> = {};
  for (let page = 0; page < 100; page++) {
    const r = await node.handle(
      new Request(`http://localhost${WS}/logs/query`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ pageSize: 100, ...cursor }),
      }),
    );
    expect(r.status).toBe(200);
    ids.push(...((await r.json()) as { id: string }[]).map((e) => e.id));
    const id = r.headers.get("x-next-cursor-id");
    if (!id) return ids;
    cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts")! };
  }
  throw new Error("more than 100 pages");
}
const stopped = new Set<ClusterNode>();
async function stop(node: ClusterNode): Promise<void> {
  stopped.add(node);
  await node.stop();
}
/** write sends `writes` bulk writes of 10 entries round-robin through the running nodes, and keeps their ids in `sent` */
async function write(key: string, writes: number, sent: string[]): Promise<void> {
  const running = c.nodes.filter((n) => !stopped.has(n));
  for (let k = 0; k < writes; k++) {
    const body = JSON.stringify(Array.from({ length: 10 }, (_, i) => entry({ action: `w${k}.${i}` })));
    const r = await running[k % running.length].handle(
      new Request(`http://localhost${WS}/logs/bulk`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body }),
    );
    expect(r.status).toBe(201);
    sent.push(...((await r.json()) as { ids: string[] }).ids);
  }
}

test("a partition stream is trimmed below what every copy applied, and reads, tails from a cursor and new copies still get every entry", async () => {
  // a workspace on each partition
  const tenants: { key: string; sent: string[] }[] = [];
  for (let w = 0; w < 60 && tenants.length < P; w++) {
    const ws = await c.workspace();
    if (partitionOf(ws.id, P) !== tenants.length) continue;
    tenants.push({ key: await ws.key("production", "rw"), sent: [] });
  }
  expect(tenants.length).toBe(P);
  for (const t of tenants) await write(t.key, 10, t.sent);
  const lasts: number[] = [];
  for (let p = 0; p < P; p++) {
    lasts.push(await settled(p));
    expect((await stream(p)).first_seq).toBe(1);
  }
  const n0 = nodeNamed("n0"); // first in both partitions' assignments: it trims both
  // the nodes' own trimmers keep what is younger than TRIM_AFTER_MS (longer than the fronts' deduplication window)
  const aged = new StreamTrimmer(n0.link, n0.settings, "n0", () => n0.held());
  expect(await aged.trim()).toEqual(lasts.map((_, p) => ({ partition: p, held: "no message is old enough yet" })));
  expect((await stream(0)).first_seq).toBe(1);
  expect(await new StreamTrimmer(n0.link, n0.settings, "n0", () => n0.held(), 0).trim()).toEqual(
    lasts.map((last, p) => ({ partition: p, purgedBelow: last + 1 })),
  );
  for (let p = 0; p < P; p++) {
    const last = lasts[p];
    const after = await stream(p);
    expect({ first: after.first_seq, last: after.last_seq, messages: after.messages }).toEqual({ first: last + 1, last, messages: 0 });
  }
  // every server trimmed alike, and the read barrier (the last sequence) is kept
  const s = await clusterStatus(c.nats.urls, { monitors: c.nats.monitors, serverTimeoutMs: 2000 });
  expect(s.problems).toEqual([]);
  for (const t of tenants) {
    for (const node of c.nodes) expect((await everyId(node, t.key)).sort()).toEqual([...t.sent].sort());
    const r = await c.call(0, "POST", `${WS}/logs`, { key: t.key, body: entry({ message: "after the trim" }) });
    expect(r.status).toBe(201);
    t.sent.push(((await r.json()) as { id: string }).id);
    for (const node of c.nodes) expect((await everyId(node, t.key)).length).toBe(t.sent.length);
  }

  // a tail resuming from a cursor of an entry written before the trim gets every entry after it
  const [a] = tenants;
  const ascending = await everyId(c.nodes[2], a.key).then((ids) => ids.reverse());
  const from = (await (await c.call(2, "GET", `${WS}/logs/${ascending[49]}`, { key: a.key })).json()) as { id: string; server_timestamp: string };
  const tail = await c.call(2, "GET", `${WS}/logs/tail?after=${encodeURIComponent(`${from.server_timestamp}_${from.id}`)}`, { key: a.key });
  expect(tail.status).toBe(200);
  const reader = new SseReader(tail.body!);
  const got = (await reader.take(ascending.length - 50, 10_000)).filter((e) => e.event === "entry").map((e) => (JSON.parse(e.data) as { id: string }).id);
  await reader.close();
  expect(got).toEqual(ascending.slice(50));

  // a new copy starts from a peer's backup of a trimmed stream and consumes on (n3 takes partition 1 from n0)
  const added = await c.addNode();
  const { assignment } = await rebalance(c.nats.urls);
  expect(assignment).toEqual([
    ["n0", "n1"],
    ["n2", "n3"],
  ]);
  const until = Date.now() + BACKUP_WAIT_MS;
  while (!(1 in added.held()) && Date.now() < until) await Bun.sleep(50);
  expect([...added.restored]).toEqual([1]);
  const b = tenants[1];
  await write(b.key, 3, b.sent);
  expect((await everyId(added, b.key)).sort()).toEqual([...b.sent].sort());
}, 180_000);

test("a copy that is down holds its partition's trimming back and catches up from the stream; a copy the stream was trimmed past starts from a backup", async () => {
  const ws0 = await (async () => {
    for (let w = 0; w < 60; w++) {
      const ws = await c.workspace();
      if (partitionOf(ws.id, P) === 0) return ws;
    }
    throw new Error("no workspace on partition 0");
  })();
  const key = await ws0.key("production", "rw");
  const sent: string[] = [];
  await write(key, 3, sent);
  await settled(0);
  await trimNow(0);
  const before = (await stream(0)).first_seq;

  // n1 (a copy of partition 0, not the one trimming it) stops; writes go on; nothing is trimmed while it is down
  const n1 = nodeNamed("n1");
  await stop(n1);
  await write(key, 3, sent);
  const held = await trimNow(0);
  expect(held.held).toContain("node n1");
  expect((await stream(0)).first_seq).toBe(before);
  const back = await ClusterNode.start(n1.options);
  c.nodes.push(back);
  expect((await everyId(back, key)).sort()).toEqual([...sent].sort()); // it consumed what it missed from the stream
  const last = await settled(0);
  expect(await trimNow(0)).toEqual({ partition: 0, purgedBelow: last + 1 });

  // n3 stops and partition 1 goes back to n0, whose old copy the stream has been trimmed past: it starts from n2's backup
  const b = await (async () => {
    for (let w = 0; w < 60; w++) {
      const ws = await c.workspace();
      if (partitionOf(ws.id, P) === 1) return { key: await ws.key("production", "rw"), sent: [] as string[] };
    }
    throw new Error("no workspace on partition 1");
  })();
  await write(b.key, 3, b.sent);
  await settled(1);
  expect((await trimNow(1)).purgedBelow).toBeGreaterThan(1);
  await stop(nodeNamed("n3"));
  const { assignment } = await rebalance(c.nats.urls);
  expect(assignment).toEqual([
    ["n0", "n1"],
    ["n0", "n2"],
  ]);
  const n0 = nodeNamed("n0");
  const until = Date.now() + BACKUP_WAIT_MS;
  while (!(1 in n0.held()) && Date.now() < until) await Bun.sleep(50);
  expect(n0.restored.has(1)).toBe(true);
  await write(b.key, 1, b.sent);
  expect((await everyId(n0, b.key)).sort()).toEqual([...b.sent].sort());
}, 180_000);
