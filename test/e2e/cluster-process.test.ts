// A cluster of real processes (contract §13): 3 nats-server and 3 `sluice serve --cluster`, set up with `sluice cluster
// init` and `rebalance`. Four bulk writers run for 20 s while a NATS server and a Sluice storage node are killed
// (kill -9) and restarted: every 201 is readable exactly once, and `sluice cluster status` finds the copies identical.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsCluster, type NatsCluster } from "../helpers/nats.ts";
import { runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { ADMIN_TOKEN, WS, entry } from "../helpers/sluice.ts";

let nats: NatsCluster;
let dir: string;
const nodes: (ServerProcess | undefined)[] = [];
let env: Record<string, string>;

const startNode = async (i: number) => {
  nodes[i] = await spawnServer(join(dir, `n${i}`), { ...env, SLUICE_NODE_ID: `n${i}`, SLUICE_ACCESS_LOG: "off" });
};

beforeAll(async () => {
  nats = await startNatsCluster(3);
  dir = mkdtempSync(join(tmpdir(), "sluice-cluster-proc-"));
  env = { SLUICE_CLUSTER: nats.urls.join(","), SLUICE_NATS_MONITOR: nats.monitors.join(","), SLUICE_ADMIN_TOKEN: ADMIN_TOKEN, SLUICE_IP_RATE_PER_MIN: "-1" };
  const init = await runCli(["cluster", "init", "--partitions", "4", "--replicas", "3", "--copies", "2"], env);
  expect(init.stderr + init.stdout).toContain("initialised");
  expect(init.code).toBe(0);
  for (const i of [0, 1, 2]) await startNode(i);
  expect((await runCli(["cluster", "rebalance"], env)).code).toBe(0);
}, 90_000);

afterAll(async () => {
  for (const n of nodes) n?.proc.kill(9);
  await Promise.all(nodes.map((n) => n?.exited));
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** statusOk runs `sluice cluster status` until it exits 0 (at most `ms`) and returns its last result. */
async function statusOk(ms: number) {
  const until = Date.now() + ms;
  for (;;) {
    const r = await runCli(["cluster", "status"], env);
    if (r.code === 0 || Date.now() > until) return r;
    await Bun.sleep(500);
  }
}

test("kill -9 of a NATS server and of a Sluice storage node under bulk writes loses no acknowledged entry and stores none twice", async () => {
  expect((await statusOk(20_000)).code).toBe(0);
  // in a cluster the workspaces and keys commands go through a node's admin API; the key works on every node
  const made = await runCli(["workspaces", "create", "--name", "kill", "--organization", "Acme", "--url", nodes[0]!.base], env);
  expect(made.code).toBe(0);
  const ws = JSON.parse(made.stdout) as { id: string };
  const keyMade = await runCli(["keys", "create", "--workspace", ws.id, "--environment", "production", "--type", "rw", "--url", nodes[1]!.base], env);
  expect(keyMade.code).toBe(0);
  const { key } = JSON.parse(keyMade.stdout) as { key: string };
  const listed = await runCli(["workspaces", "list", "--url", nodes[2]!.base], env);
  expect((JSON.parse(listed.stdout) as { id: string }[]).map((w) => w.id)).toContain(ws.id);

  const acked: string[] = [];
  const start = Date.now();
  let refused = 0;
  const writer = async (w: number) => {
    for (let n = 0; Date.now() - start < 20_000; n++) {
      const node = nodes[(w + n) % 3];
      if (!node) continue;
      try {
        const r = await fetch(`${node.base}${WS}/logs/bulk`, {
          method: "POST",
          headers: { "x-api-key": key, "content-type": "application/json" },
          body: JSON.stringify(Array.from({ length: 50 }, (_, k) => entry({ action: `w${w}.${n}.${k}` }))),
          signal: AbortSignal.timeout(15_000),
        });
        if (r.status === 201) acked.push(...((await r.json()) as { ids: string[] }).ids);
        else refused++;
        await Bun.sleep(50); // a bounded volume: the check below pages every entry on every node
      } catch {
        refused++; // the node died under the request: its outcome is unknown, so it is not counted
      }
    }
  };
  const chaos = (async () => {
    await Bun.sleep(5000);
    nats.kill9(0);
    await Bun.sleep(5000);
    nodes[2]!.proc.kill(9);
    nodes[2] = undefined;
    await Bun.sleep(2000);
    await nats.start(0);
    await Bun.sleep(2000);
    await startNode(2);
  })();
  await Promise.all([0, 1, 2, 3].map(writer));
  await chaos;
  expect(acked.length).toBeGreaterThan(5_000);

  // every copy catches up (the restarted node replays from its applied sequence), and status stays green
  type Status = { partitions: { last: number; servers: { last: number; messages: number }[]; copies: { applied: number }[] }[] };
  const allCaughtUp = (s: Status) => s.partitions.every((p) => p.copies.every((copy) => copy.applied === p.last));
  const until = Date.now() + 30_000;
  let status = await statusOk(30_000);
  while (!(status.code === 0 && allCaughtUp(JSON.parse(status.stdout))) && Date.now() < until) {
    await Bun.sleep(1000);
    status = await statusOk(30_000);
  }
  if (status.code !== 0) console.error(status.stderr);
  if (!allCaughtUp(JSON.parse(status.stdout))) console.error(status.stdout.slice(0, 3000), nodes.map((n) => n?.output().slice(-1500)).join("\n----\n"));
  expect(status.code).toBe(0);
  for (const p of (JSON.parse(status.stdout) as Status).partitions) {
    for (const copy of p.copies) expect(copy.applied).toBe(p.last);
    expect(p.servers.map((s) => s.last)).toEqual([p.last, p.last, p.last]); // every NATS server holds the whole stream, the killed one too
  }

  for (const i of [0, 1, 2]) {
    const seen = new Map<string, number>();
    let cursor: Record<string, string> = {};
    for (let page = 0; page < 5000; page++) {
      const r = await fetch(`${nodes[i]!.base}${WS}/logs/query`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify({ pageSize: 100, ...cursor }),
      });
      expect(r.status).toBe(200);
      for (const e of (await r.json()) as { id: string }[]) seen.set(e.id, (seen.get(e.id) ?? 0) + 1);
      const id = r.headers.get("x-next-cursor-id");
      if (!id) break;
      cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts")! };
    }
    const missing = acked.filter((id) => !seen.has(id)).length;
    const twice = [...seen.values()].filter((n) => n > 1).length;
    expect({ node: i, acked: acked.length, missing, twice }).toEqual({ node: i, acked: acked.length, missing: 0, twice: 0 });
  }
  console.error(`cluster kill test: ${acked.length} acknowledged entries, ${refused} requests refused or cut`);
}, 120_000);
