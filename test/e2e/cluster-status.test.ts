// `sluice cluster status` audits every replica (contract §13): each NATS server's own first, last and count of each
// partition stream, read from its monitoring port. Green on a healthy cluster with the same figures from every
// server; red, naming the server and the stream, while a server is stopped (SIGSTOP) and writes go on; green again
// once it runs on and has caught up.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { partitionOf } from "../../src/cluster/names.ts";
import { clusterStatus } from "../../src/cluster/status.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { runCli } from "../helpers/process.ts";
import { WS, entry } from "../helpers/sluice.ts";

let c: TestCluster;
beforeAll(async () => {
  c = await startTestCluster({ partitions: 2 });
}, 60_000);
afterAll(async () => {
  await c?.close();
}, 30_000);

/**
 * status reads the cluster's status as `sluice cluster status` does. JetStream's API can answer "temporarily
 * unavailable" past the command's own patience after an election on a loaded machine: that is read again, up to 60 s.
 */
async function status() {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      return await clusterStatus(c.nats.urls, { monitors: c.nats.monitors, serverTimeoutMs: 1000 });
    } catch (e) {
      if (Date.now() > until || !String(e).includes("temporarily unavailable")) throw e;
      await Bun.sleep(500);
    }
  }
}

/**
 * write stores `n` entries of one workspace, 10 a bulk write, round-robin through the nodes; a 503 is retried as a
 * client would (a node whose NATS server stopped answering reconnects to another meanwhile) for up to 60 s.
 */
async function write(key: string, n: number): Promise<void> {
  for (let k = 0; k < n; k += 10) {
    const send = () => c.call(k % 3, "POST", `${WS}/logs/bulk`, { key, body: Array.from({ length: 10 }, () => entry()) });
    const until = Date.now() + 60_000;
    let r = await send();
    while (r.status === 503 && Date.now() < until) {
      await Bun.sleep(200);
      r = await send();
    }
    // the answer is shown whole when it is not 201: a 503's message says what NATS could not do
    expect({ node: k % 3, status: r.status, body: r.status === 201 ? "" : await r.text() }).toEqual({ node: k % 3, status: 201, body: "" });
  }
}

test("cluster status is green with the same first, last and count from every NATS server, and red naming the server and stream while one is stopped", async () => {
  const ws = await c.workspace();
  const key = await ws.key("production", "rw");
  const p = partitionOf(ws.id, c.nodes[0].settings.partitions);
  await write(key, 50);

  // a copy a beat behind is no problem (another copy has applied everything): wait until each node's beat has caught up
  let healthy = await status();
  for (let until = Date.now() + 10_000; !healthy.partitions[p].copies.every((copy) => copy.caughtUp) && Date.now() < until; ) {
    await Bun.sleep(200);
    healthy = await status();
  }
  expect(healthy.problems).toEqual([]);
  expect(healthy.ok).toBe(true);
  const part = healthy.partitions[p];
  expect(part.last).toBeGreaterThanOrEqual(5);
  expect(part.servers.map((s) => s.server)).toEqual(c.nats.names);
  for (const s of part.servers) expect(s).toEqual({ server: s.server, first: part.first, last: part.last, messages: part.messages });
  for (const copy of part.copies) expect(copy).toEqual({ node: copy.node, applied: part.last, lag: 0, caughtUp: true });
  const cli = await runCli(["cluster", "status", "--cluster", c.nats.urls.join(","), "--monitor", c.nats.monitors.join(",")]);
  expect(cli.code).toBe(0);

  // a server that answers nothing is unknown, and unknown is red: the partition's stream is named with it
  // the stream keeps its leader and JetStream its meta leader: no election to wait out (after one, JetStream's API
  // answered "temporarily unavailable" for over 10 s on a loaded machine)
  const jsz = (await (await fetch(`${c.nats.monitors[0]}/jsz`)).json()) as { meta_cluster?: { leader?: string } };
  const stopped = c.nats.names.findIndex((name) => name !== part.leader && name !== jsz.meta_cluster?.leader);
  c.nats.pause(stopped);
  try {
    await write(key, 30); // a majority (two of three) takes the writes on
    const red = await status();
    expect(red.ok).toBe(false);
    expect(red.problems.some((line) => line.includes(`server s${stopped}, stream SLUICE_P${p}:`))).toBe(true);
    expect(red.partitions[p].servers.find((s) => s.server === `s${stopped}`)).toEqual({ server: `s${stopped}`, first: null, last: null, messages: null });
    const redCli = await runCli(["cluster", "status", "--cluster", c.nats.urls.join(","), "--monitor", c.nats.monitors.join(",")]);
    expect(redCli.code).toBe(1);
    expect(redCli.stderr).toContain(`server s${stopped}, stream SLUICE_P${p}:`);
  } finally {
    c.nats.resume(stopped);
  }

  // once it runs on, it catches up from its peers and every server has the same figures again
  // (the resumed server may call an election: a stream can be without a leader for a while on a busy machine)
  const until = Date.now() + 60_000;
  let again = await status();
  while (!again.ok && Date.now() < until) again = await status();
  expect(again.problems).toEqual([]);
  const after = again.partitions[p];
  expect(after.last).toBeGreaterThanOrEqual(part.last! + 3); // a write answered 503 may be in the stream too
  for (const s of after.servers) expect(s).toEqual({ server: s.server, first: after.first, last: after.last, messages: after.messages });
}, 240_000);

test("without the servers' monitoring URLs, cluster status is red: replicas it did not audit are not taken as agreeing", async () => {
  const s = await clusterStatus(c.nats.urls, { monitors: [], settleMs: 0 });
  expect(s.ok).toBe(false);
  expect(s.problems.join("\n")).toContain("--monitor or SLUICE_NATS_MONITOR");
}, 30_000);
