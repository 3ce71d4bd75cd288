// Alerts across kill -9 on a cluster of real processes (contract §16: killing a node neither loses nor repeats a
// notification): 3 nats-server and 3 `sluice serve --cluster`, rules every second. The node that evaluates the rule is
// killed while it fires: the node taking over sends no second firing notice, and the resolved notice arrives once,
// also for an incident that resolved while no node evaluated it.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AlertOwners } from "../../src/cluster/alert-owners.ts";
import { Beats } from "../../src/cluster/beats.ts";
import { Link } from "../../src/cluster/link.ts";
import { partitionOf } from "../../src/cluster/names.ts";
import { startNatsCluster, type NatsCluster } from "../helpers/nats.ts";
import { runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { httpReceiver } from "../helpers/receivers.ts";
import { ADMIN_TOKEN, WS, entry } from "../helpers/sluice.ts";

const PARTITIONS = 4;
let nats: NatsCluster;
let dir: string;
let env: Record<string, string>;
let observer: Link;
const nodes: (ServerProcess | undefined)[] = [];
const hook = httpReceiver();

const startNode = async (i: number) => {
  nodes[i] = await spawnServer(join(dir, `n${i}`), { ...env, SLUICE_NODE_ID: `n${i}`, SLUICE_ACCESS_LOG: "off", SLUICE_ALERT_MIN_EVERY: "1s" });
};

beforeAll(async () => {
  nats = await startNatsCluster(3);
  dir = mkdtempSync(join(tmpdir(), "sluice-cluster-alerts-"));
  env = { SLUICE_CLUSTER: nats.urls.join(","), SLUICE_ADMIN_TOKEN: ADMIN_TOKEN, SLUICE_IP_RATE_PER_MIN: "-1" };
  const init = await runCli(["cluster", "init", "--partitions", String(PARTITIONS), "--replicas", "3", "--copies", "2"], env);
  expect(init.code).toBe(0);
  for (const i of [0, 1, 2]) await startNode(i);
  expect((await runCli(["cluster", "rebalance"], env)).code).toBe(0);
  observer = await Link.open(nats.urls, "alerts-kill-observer");
}, 90_000);

afterAll(async () => {
  hook.stop();
  await observer?.close();
  for (const n of nodes) n?.proc.kill(9);
  await Promise.all(nodes.map((n) => n?.exited));
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

const notices = () => hook.got.map((g) => JSON.parse(g.body).status as string);
const live = () => nodes.filter((n): n is ServerProcess => n !== undefined);

/** until waits for a condition, checking every 100 ms, at most `ms`. */
async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number) {
  const deadline = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(notices())}`);
    await Bun.sleep(100);
  }
}

async function call(node: ServerProcess, method: string, path: string, body: unknown, headers: Record<string, string>) {
  const r = await fetch(`${node.base}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** ownerOf is the node that evaluates partition p's alert rules, read from the beats as every node reads them. */
async function ownerOf(p: number): Promise<number> {
  const beats = new Beats(observer, "observer", [], () => ({}));
  await beats.read();
  const id = new AlertOwners("observer", PARTITIONS, (q) => beats.holders(q)).pickOf(p);
  if (id === undefined) throw new Error(`no live node holds a copy of partition ${p}`);
  return Number(id.slice(1));
}

/** writer posts an error entry every 200 ms through the live nodes in turn, until stopped. */
function writer(auth: Record<string, string>) {
  let writing = true;
  const done = (async () => {
    for (let n = 0; writing; n++) {
      const targets = live();
      const node = targets[n % targets.length];
      await fetch(`${node.base}${WS}/logs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: JSON.stringify(entry({ action: "pay", level: "error", clientTimestamp: new Date().toISOString() })),
        signal: AbortSignal.timeout(15_000),
      }).catch(() => {}); // a node killed under the request
      await Bun.sleep(200);
    }
  })();
  return () => {
    writing = false;
    return done;
  };
}

/** evaluatedSince is whether the rule's firing instance was last evaluated after `ms` (a live owner evaluates it). */
async function evaluatedSince(auth: Record<string, string>, ms: number): Promise<boolean> {
  const r = await fetch(`${live()[0].base}${WS}/alerts`, { headers: auth });
  const alerts = (await r.json()) as { last_evaluated_at: string; state: string }[];
  return alerts.some((a) => a.state === "firing" && Date.parse(a.last_evaluated_at) > ms);
}

async function kill(i: number) {
  nodes[i]!.proc.kill(9);
  await nodes[i]!.exited;
  nodes[i] = undefined;
}

test("kill -9 of the node evaluating a firing rule: no second firing notice, and each resolved notice arrives once", async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const ws = await call(nodes[0]!, "POST", "/api/v1/admin/workspaces", { name: "alerts-kill", organization: "Acme", plan: "unlimited" }, admin);
  expect(ws.status).toBe(201);
  const made = await call(nodes[1]!, "POST", `/api/v1/admin/workspaces/${ws.body.id}/keys`, { environment: "production", type: "rw", scopes: ["*"] }, admin);
  const auth = { "x-api-key": made.body.key as string };
  const ch = await call(nodes[2]!, "POST", `${WS}/alerts/channels`, { name: "hook", type: "webhook", config: { url: hook.url } }, auth);
  expect(ch.status).toBe(201);
  const rule = { name: "pay errors", query: "level=error", condition: { op: ">", threshold: 0 }, window: "6s", every: "1s", channels: [ch.body.id] };
  expect((await call(nodes[0]!, "POST", `${WS}/alerts/rules`, rule, auth)).status).toBe(201);
  const p = partitionOf(ws.body.id as string, PARTITIONS);

  // incident 1: fires; its owner is killed while it fires; the errors go on until the next owner has evaluated it
  let stop = writer(auth);
  await until("the first firing notice", () => notices().length >= 1, 40_000);
  await Bun.sleep(500); // the delivery's outcome is in the bucket
  const first = await ownerOf(p);
  const killedAt = Date.now();
  await kill(first);
  await until("an evaluation by the node taking over", () => evaluatedSince(auth, killedAt + 2000), 60_000);
  await Bun.sleep(3000); // three more evaluations while it still fires
  expect(notices()).toEqual(["firing"]);
  await stop();
  await until("the resolved notice", () => notices().length >= 2, 20_000);
  await startNode(first);

  // incident 2: fires; its owner is killed and the errors stop, so it resolves while no node evaluates it
  stop = writer(auth);
  await until("the second incident's firing notice", () => notices().length >= 3, 60_000);
  await stop();
  await Bun.sleep(500);
  await kill(await ownerOf(p));
  await until("the resolved notice from the node taking over", () => notices().length >= 4, 60_000);
  await Bun.sleep(3000); // nothing more comes
  expect(notices()).toEqual(["firing", "resolved", "firing", "resolved"]);
}, 240_000);
