// Syslog on a cluster (contract §11 and §13): `sluice serve` in cluster mode starts the syslog listeners on a front
// node, whose messages go through its front to the partition streams like any write and are read on every node; on
// SIGTERM the node stores what its listeners received before it lets go of NATS, and exits 0. Real processes: 3
// nats-server and 2 `sluice serve --cluster`.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsCluster, type NatsCluster } from "../helpers/nats.ts";
import { copiesCaughtUp, runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { until } from "../helpers/shippers.ts";
import { ADMIN_TOKEN, WS } from "../helpers/sluice.ts";

let nats: NatsCluster;
let dir: string;
let env: Record<string, string>;
let n0: ServerProcess;
let n1: ServerProcess | undefined;
let key: string;
let tcpPort: number;
let udpPort: number;

const admin = async (path: string, body: unknown) => {
  const r = await fetch(`${n0.base}/api/v1/admin${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status !== 201) throw new Error(`POST ${path} answered ${r.status}: ${await r.text()}`);
  return (await r.json()) as { id: string; key: string };
};

beforeAll(async () => {
  nats = await startNatsCluster(3);
  dir = mkdtempSync(join(tmpdir(), "sluice-cluster-syslog-"));
  env = { SLUICE_CLUSTER: nats.urls.join(","), SLUICE_ADMIN_TOKEN: ADMIN_TOKEN, SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off" };
  const init = await runCli(["cluster", "init", "--partitions", "2", "--replicas", "3", "--copies", "2"], env);
  expect(init.code).toBe(0);
  n0 = await spawnServer(join(dir, "n0"), { ...env, SLUICE_NODE_ID: "n0" });
  const ws = await admin("/workspaces", { organization: "Acme", name: "syslog", plan: "unlimited" });
  key = (await admin(`/workspaces/${ws.id}/keys`, { name: "syslog", environment: "production", type: "rw" })).key;
  n1 = await spawnServer(join(dir, "n1"), {
    ...env,
    SLUICE_NODE_ID: "n1",
    SLUICE_SYSLOG_TCP: "127.0.0.1:0",
    SLUICE_SYSLOG_UDP: "127.0.0.1:0",
    SLUICE_SYSLOG_KEY: key,
  });
  const listening = await until(async () => /Syslog listening on tcp 127\.0\.0\.1:(\d+) and udp 127\.0\.0\.1:(\d+)/.exec(n1!.output()) ?? undefined);
  tcpPort = Number(listening[1]);
  udpPort = Number(listening[2]);
  expect((await runCli(["cluster", "rebalance"], env)).code).toBe(0);
  await copiesCaughtUp(nats.urls); // a barrier: a read before a copy opens finds none to answer it
}, 90_000);

afterAll(async () => {
  for (const n of [n0, n1]) n?.proc.kill(9);
  await Promise.all([n0, n1].map((n) => n?.exited));
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** messages reads the messages node 0 holds for the key, oldest first. */
async function messages(): Promise<string[]> {
  const out: string[] = [];
  let cursor = "";
  for (let page = 0; page < 1000; page++) {
    const r = await fetch(`${n0.base}${WS}/logs?pageSize=100${cursor}`, { headers: { "x-api-key": key } });
    if (r.status !== 200) throw new Error(`GET /logs on node 0 answered ${r.status}: ${await r.text()}`);
    out.push(...((await r.json()) as { message: string }[]).map((e) => e.message));
    const id = r.headers.get("x-next-cursor-id");
    if (!id) return out.reverse();
    cursor = `&cursorID=${id}&cursorTS=${encodeURIComponent(r.headers.get("x-next-cursor-ts")!)}`;
  }
  throw new Error("more than 1000 pages");
}

test("syslog sent to a cluster node's listeners over TCP and UDP is stored through its front and read on another node", async () => {
  const logger = async (args: string[]) => {
    const proc = Bun.spawn(["logger", "-n", "127.0.0.1", ...args], { stdout: "pipe", stderr: "pipe" });
    expect(await proc.exited).toBe(0);
  };
  await logger(["-P", String(tcpPort), "-T", "--octet-count", "--rfc5424", "--msgid", "login", "-p", "auth.warning", "-t", "sshd", "over tcp"]);
  await logger(["-P", String(udpPort), "-d", "--rfc3164", "-p", "daemon.crit", "-t", "cron", "over udp"]);
  await until(async () => ((await messages()).includes("over udp") && (await messages()).includes("over tcp") ? true : undefined), 15_000);
  const r = await fetch(`${n0.base}${WS}/logs/query`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ query: "action=login" }),
  });
  expect(await r.json()).toEqual([
    expect.objectContaining({ message: "over tcp", level: "warn", context: expect.objectContaining({ app: "sshd", facility: "auth" }) }),
  ]);
}, 30_000);

const SENT = 20_000;
test("on SIGTERM a cluster node stores every message its syslog listener received, then exits 0", async () => {
  // enough that writes are still under way when the signal comes (20 writes of 1,000)
  const lines = Array.from({ length: SENT }, (_, i) => `<14>1 2026-11-22T10:00:00.000Z h app - - - before stop ${i}\n`).join("");
  const socket = connect(tcpPort, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.end(lines);
  await new Promise<void>((resolve) => socket.once("close", () => resolve())); // the node has read up to the end
  n1!.proc.kill("SIGTERM");
  expect(await n1!.exited).toBe(0);
  n1 = undefined;
  const stored = (await messages()).filter((m) => m.startsWith("before stop "));
  expect(stored.length).toBe(SENT);
  expect(new Set(stored).size).toBe(SENT);
}, 30_000);

test("a cluster node without the front role refuses syslog settings, naming the fix", async () => {
  const refused = spawnServer(join(dir, "n2"), {
    ...env,
    SLUICE_NODE_ID: "n2",
    SLUICE_ROLES: "query,storage",
    SLUICE_SYSLOG_TCP: "127.0.0.1:0",
    SLUICE_SYSLOG_KEY: key,
  });
  await expect(refused).rejects.toThrow(/need the front role: add front to SLUICE_ROLES/);
}, 30_000);
