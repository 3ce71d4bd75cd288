// cluster bench (contract §13): 3 nats-server + 3 `sluice serve --cluster` processes on this one machine beside one
// Sluice process, in the same run: bulk ingest (4 clients, each its own workspace, 1,000-entry bodies, no entry sent
// twice and the same bodies to both sides; the cluster's rate counts until a copy of each workspace's partition has
// applied every write) and page-1 p50 of the standard queries on the one process, through a node that holds a copy
// of the workspace's partition, through one that forwards to it, and through each node in turn as a load balancer
// sends them, the four taking turns query by query (the one process stays up, idle, during the cluster's ingest). Checks every count via queries.
// Both sides first write BENCH_WARMUP entries (default 40,000) to other workspaces, so each process has compiled its
// code; the CPU each kind of process used during the timed ingest is printed per entry (from /proc), and the Sluice
// processes' by thread, to see where the cluster's work goes, and the cluster's CPU an entry (nodes and nats-server)
// over one process's. BENCH_ENTRIES sets the total ingested (default 400,000), BENCH_COPIES the copies of each
// partition (default 2), BENCH_PARTITIONS the partitions (default 4). The nats-servers run with GOMAXPROCS=1 unless GOMAXPROCS is set.
// BENCH_CLUSTER_NODES (node URLs, comma-separated) with BENCH_ADMIN_TOKEN measures a cluster already running on
// machines of its own instead, spawning nothing: its readable rate, its nodes' CPU (from /metrics) and page-1 p50s.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsCluster } from "../test/helpers/nats.ts";
import { runCli, spawnServer, type ServerProcess } from "../test/helpers/process.ts";
import { loghubLike } from "./data.ts";
import { BATCH, CLIENTS, distinctBody } from "./ingest.ts";
import { median } from "./servers.ts";

const TOTAL = Number(process.env.BENCH_ENTRIES ?? 400_000);
/** entries written to other workspaces before the timed run, on both sides: each of the cluster's processes compiles its code first */
const WARMUP = Number(process.env.BENCH_WARMUP ?? 40_000);
/** LMDB copies of each partition (the cluster's default is 2: each entry is then applied twice on this one machine) */
const COPIES = process.env.BENCH_COPIES ?? "2";
/** the cluster's partitions, spread over its three nodes (each copy is a data directory with its own workers) */
const PARTITIONS = process.env.BENCH_PARTITIONS ?? "4";
/** a cluster already running on machines of its own (comma-separated node URLs): measured as it is, nothing spawned */
const NODES = process.env.BENCH_CLUSTER_NODES?.split(",").filter((u) => u !== "");
const TOKEN = NODES ? (process.env.BENCH_ADMIN_TOKEN ?? "") : "bench-admin-token";
const QUERIES: [string, string][] = [
  ["latest page", ""],
  ["level=error", "level=error"],
  ["a tag", "tag=svc-3"],
  ["action~ substring", "action~pay"],
  ["JSON-field equality", "metadata.status_code=404"],
  ["two-word full-text", 'message@"slow checkout"'],
  ["three-term query", "level=warn tag=region-2 action~order"],
];

const admin = async (base: string, path: string, body: unknown) => {
  const r = await fetch(`${base}/api/v1/admin${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (r.status !== 201) throw new Error(`admin ${path}: ${r.status} ${await r.text()}`);
  return r.json() as Promise<{ id: string; key: string }>;
};

/** keys makes CLIENTS workspaces with a key each through a node's admin API. */
async function keys(base: string): Promise<{ ws: string; key: string }[]> {
  const out: { ws: string; key: string }[] = [];
  for (let i = 0; i < CLIENTS; i++) {
    const ws = await admin(base, "/workspaces", { organization: "Bench", name: `bench-${i}-${crypto.randomUUID().slice(0, 6)}`, plan: "unlimited" });
    out.push({ ws: ws.id, key: (await admin(base, `/workspaces/${ws.id}/keys`, { name: "k", environment: "production", type: "rw" })).key });
  }
  return out;
}

/** ingest sends `total` entries, client c to its own workspace through bases[c % bases.length]; entries per second until `done` resolves. */
async function ingest(
  bases: string[],
  clients: { key: string }[],
  payloads: (i: number) => string,
  done: () => Promise<void>,
  total = TOTAL,
): Promise<{ acked: number; applied: number }> {
  const requests = Math.ceil(total / BATCH);
  const list = Array.from({ length: requests }, (_, i) => payloads(i)); // made before the clock starts: the client stays light
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    clients.map(async ({ key }, c) => {
      while (next < requests) {
        const i = next++;
        const r = await fetch(`${bases[(c + i) % bases.length]}/api/v1/workspace/logs/bulk`, {
          method: "POST",
          headers: { "content-type": "application/json", "x-api-key": key },
          body: list[i],
        });
        if (r.status !== 201) throw new Error(`request ${i}: ${r.status} ${await r.text()}`);
        await r.arrayBuffer();
      }
    }),
  );
  const acked = (requests * BATCH) / ((performance.now() - t0) / 1000);
  await done();
  return { acked, applied: (requests * BATCH) / ((performance.now() - t0) / 1000) };
}

/** readAll waits until a copy of each client's partition has applied every write: a read's barrier. */
async function readAll(base: string, clients: { key: string }[]): Promise<void> {
  for (const { key } of clients) await fetch(`${base}/api/v1/workspace/logs?pageSize=10`, { headers: { "x-api-key": key } });
}

/** warmUp writes WARMUP entries to workspaces of their own (not counted) and waits until they are applied. */
async function warmUp(bases: string[], payloads: (i: number) => string): Promise<void> {
  if (WARMUP <= 0) return;
  const clients = await keys(bases[0]);
  const skip = Math.ceil(TOTAL / BATCH); // bodies of their own, after the timed run's
  await ingest(
    bases,
    clients,
    (i) => payloads(skip + i),
    () => readAll(bases[0], clients),
    WARMUP,
  );
}

/** count pages nothing: it asks usage of each workspace (the copies' count) and sums them. */
async function stored(base: string, clients: { key: string }[]): Promise<number> {
  let n = 0;
  for (const { key } of clients)
    n += ((await (await fetch(`${base}/api/v1/workspace/usage`, { headers: { "x-api-key": key } })).json()) as { used: number }).used;
  return n;
}

/** threadTicks is the user + system CPU each thread of a process has used, in clock ticks (1/100 s), by thread id, from /proc. */
function threadTicks(pid: number): Map<string, { name: string; ticks: number }> {
  const out = new Map<string, { name: string; ticks: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(tid, { name: stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")")), ticks: Number(fields[11]) + Number(fields[12]) });
    } catch {
      // ended meanwhile
    }
  }
  return out;
}

/** children lists this process's child processes by command (nats-server, the Sluice nodes). */
function children(): { pid: number; command: string }[] {
  const out: { pid: number; command: string }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === process.pid) out.push({ pid: Number(name), command: readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0")[0] });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * cpuDuring measures the CPU seconds of each kind of child process (but those of `skip`) and of this client while
 * `work` runs, and those of the Sluice processes' threads by thread name (Worker: the ingest and full-text workers;
 * bun.exe: the main thread; Bun Pool: LMDB's commits and other native work; JITWorker: compiling).
 */
async function cpuDuring<T>(work: () => Promise<T>, skip: number[] = []): Promise<{ result: T; cpu: Record<string, number>; threads: Record<string, number> }> {
  const kids = children().filter((k) => !skip.includes(k.pid));
  const before = kids.map((k) => threadTicks(k.pid));
  const client = process.cpuUsage();
  const result = await work();
  const cpu: Record<string, number> = {};
  const threads: Record<string, number> = {};
  kids.forEach((k, i) => {
    const kind = k.command.includes("nats-server") ? "nats-server" : "sluice";
    for (const [tid, { name, ticks }] of threadTicks(k.pid)) {
      const seconds = (ticks - (before[i].get(tid)?.ticks ?? 0)) / 100;
      cpu[kind] = (cpu[kind] ?? 0) + seconds;
      const thread = name.replace(/ \d+$/, ""); // the pool's threads together
      if (kind === "sluice") threads[thread] = (threads[thread] ?? 0) + seconds;
    }
  });
  const used = process.cpuUsage(client);
  cpu.client = (used.user + used.system) / 1e6;
  return { result, cpu, threads };
}

/**
 * p50s gives the p50 of page 1 of a query on each target, 60 runs after 5 warm-ups, the targets taking turns so that
 * the machine's other load falls on each alike.
 */
async function p50s(targets: { bases: string[]; key: string }[], query: string): Promise<number[]> {
  const times: number[][] = targets.map(() => []);
  for (let i = 0; i < 65; i++) {
    for (const [j, { bases, key }] of targets.entries()) {
      const t = performance.now();
      const r = await fetch(`${bases[i % bases.length]}/api/v1/workspace/logs/query`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key },
        body: JSON.stringify({ query, pageSize: 50 }),
      });
      if (r.status !== 200) throw new Error(`query ${query}: ${r.status} ${await r.text()}`);
      await r.arrayBuffer();
      if (i >= 5) times[j].push(performance.now() - t);
    }
  }
  return times.map(median);
}

/** nodeCpuSeconds sums the CPU seconds the nodes report on /metrics (the whole process, every thread). */
async function nodeCpuSeconds(bases: string[]): Promise<number> {
  let sum = 0;
  for (const base of bases) {
    const text = await (await fetch(`${base}/metrics`)).text();
    const line = text.split("\n").find((l) => l.startsWith("sluice_process_cpu_seconds_total "));
    if (!line) throw new Error(`${base}/metrics has no sluice_process_cpu_seconds_total: is it a Sluice node?`);
    sum += Number(line.split(" ")[1]);
  }
  return sum;
}

/** external measures a cluster on machines of its own: the rate readable on a copy, the nodes' CPU an entry, and page-1 p50s. */
async function external(bases: string[]): Promise<void> {
  if (TOKEN === "") throw new Error("set BENCH_ADMIN_TOKEN to the cluster's SLUICE_ADMIN_TOKEN: the bench makes its workspaces and keys through the admin API");
  const payloads = distinctBody(loghubLike());
  const expected = Math.ceil(TOTAL / BATCH) * BATCH;
  await warmUp(bases, payloads);
  const clients = await keys(bases[0]);
  const before = await nodeCpuSeconds(bases);
  const rate = await ingest(bases, clients, payloads, () => readAll(bases[0], clients));
  const cpu = (await nodeCpuSeconds(bases)) - before;
  if ((await stored(bases[bases.length - 1], clients)) !== expected) throw new Error("BUG: the cluster stored a different count");
  const f = (n: number) => Math.round(n).toLocaleString("en-US");
  console.log(
    `cluster bench, external: ${f(expected)} entries (after ${f(WARMUP)} to warm up), ${BATCH}/request, ${CLIENTS} clients, through ${bases.length} nodes`,
  );
  console.log(`  ${f(rate.acked)} entries/s acknowledged, ${f(rate.applied)} entries/s readable on a copy`);
  console.log(`  the nodes' CPU µs an entry, together: ${((cpu * 1e6) / expected).toFixed(1)} (nats-server's is not on /metrics: read it on its machines)`);
  console.log("  page 1 p50 (ms), each node in turn:");
  for (const [name, q] of QUERIES) console.log(`  ${name} | ${(await p50s([{ bases, key: clients[0].key }], q))[0].toFixed(2)}`);
}

/** onThisMachine runs the cluster (3 nats-server, 3 nodes) beside one process, here. */
async function onThisMachine(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "sluice-bench-cluster-"));
  const procs: ServerProcess[] = [];
  // three Go servers sharing two cores each get one core's worth of threads, as a container's CPU quota would give them
  process.env.GOMAXPROCS ??= "1";
  const nats = await startNatsCluster(3);
  try {
    const payloads = distinctBody(loghubLike()); // every request its own entries, the same on both sides
    const expected = Math.ceil(TOTAL / BATCH) * BATCH;
    // one process
    const one = await spawnServer(join(dir, "one"), { SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_ACCESS_LOG: "off" });
    procs.push(one);
    await warmUp([one.base], payloads);
    const oneClients = await keys(one.base);
    const { result: oneRate, cpu: oneCpu, threads: oneThreads } = await cpuDuring(() => ingest([one.base], oneClients, payloads, async () => {}));
    if ((await stored(one.base, oneClients)) !== expected) throw new Error("BUG: one process stored a different count");

    // the cluster
    const env = { SLUICE_CLUSTER: nats.urls.join(","), SLUICE_ADMIN_TOKEN: TOKEN, SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off" };
    const init = await runCli(["cluster", "init", "--partitions", PARTITIONS, "--copies", COPIES], env);
    if (init.code !== 0) throw new Error(`cluster init: ${init.stderr}`);
    const nodes: ServerProcess[] = [];
    for (let i = 0; i < 3; i++) nodes.push(await spawnServer(join(dir, `n${i}`), { ...env, SLUICE_NODE_ID: `n${i}` }));
    procs.push(...nodes);
    if ((await runCli(["cluster", "rebalance"], env)).code !== 0) throw new Error("rebalance failed");
    await Bun.sleep(4000); // the nodes open their copies
    const bases = nodes.map((n) => n.base);
    await warmUp(bases, payloads);
    const clients = await keys(bases[0]);
    const {
      result: rate,
      cpu: clusterCpu,
      threads: clusterThreads,
    } = await cpuDuring(
      () =>
        // a read waits for its partition's copy to apply the whole stream: one per workspace is the end of ingest
        ingest(bases, clients, payloads, () => readAll(bases[0], clients)),
      [one.proc.pid], // idle meanwhile: it answers the queries beside the cluster's below
    );
    if ((await stored(bases[1], clients)) !== expected) throw new Error("BUG: the cluster stored a different count");
    const status = JSON.parse((await runCli(["cluster", "status"], env)).stdout) as {
      partitions: { partition: number; copies: { node: string }[] }[];
      nodes: { id: string }[];
    };
    const held = new Map(status.partitions.map((p) => [p.partition, p.copies.map((c) => c.node)]));
    // which node holds the first workspace's partition, and which forwards: the order of status's partitions is the hash's
    const { partitionOf } = await import("../src/cluster/names.ts");
    const p = partitionOf(clients[0].ws, 4);
    const holder = nodes[Number((held.get(p) ?? ["n0"])[0].slice(1))];
    const other = nodes.find((_, i) => !(held.get(p) ?? []).includes(`n${i}`)) ?? holder;
    const rows = [];
    for (const [name, q] of QUERIES) {
      const [oneMs, holderMs, forwardedMs, anyMs] = await p50s(
        [
          { bases: [one.base], key: oneClients[0].key },
          { bases: [holder.base], key: clients[0].key },
          { bases: [other.base], key: clients[0].key },
          { bases, key: clients[0].key }, // as a load balancer sends them: each node in turn
        ],
        q,
      );
      rows.push({ name, one: oneMs, holder: holderMs, forwarded: forwardedMs, any: anyMs });
    }
    const f = (n: number) => Math.round(n).toLocaleString("en-US");
    console.log(
      `cluster bench: ${f(expected)} entries (after ${f(WARMUP)} to warm up), ${BATCH}/request, ${CLIENTS} clients (one workspace each); 3 nats-server (GOMAXPROCS=${process.env.GOMAXPROCS}) + 3 nodes (${COPIES} copies a partition) vs one process, same machine`,
    );
    console.log(`  one process: ${f(oneRate.acked)} entries/s`);
    console.log(
      `  cluster: ${f(rate.acked)} entries/s acknowledged, ${f(rate.applied)} entries/s readable on a copy (${(rate.applied / oneRate.acked).toFixed(2)}× one process)`,
    );
    const us = (cpu: Record<string, number>) =>
      Object.entries(cpu)
        .filter(([, s]) => s > 0)
        .sort((a, b) => b[1] - a[1])
        .map(([kind, s]) => `${kind} ${((s * 1e6) / expected).toFixed(1)}`)
        .join(", ");
    console.log(`  CPU µs an entry: one process: ${us(oneCpu)}; cluster: ${us(clusterCpu)}`);
    const sluiceAndNats = (cpu: Record<string, number>) => (cpu.sluice ?? 0) + (cpu["nats-server"] ?? 0);
    console.log(
      `  CPU an entry, the nodes and nats-server together ÷ one process: ${(sluiceAndNats(clusterCpu) / sluiceAndNats(oneCpu)).toFixed(2)}× (${COPIES} copies a partition)`,
    );
    console.log(`  Sluice's CPU µs an entry by thread: one process: ${us(oneThreads)}; cluster's nodes: ${us(clusterThreads)}`);
    console.log("  page 1 p50 (ms): query | one process | cluster, node with a copy | cluster, forwarding node | cluster, each node in turn");
    const vs = (ms: number, one: number) => `${ms.toFixed(2)} (${(ms / one).toFixed(1)}×)`;
    for (const r of rows) console.log(`  ${r.name} | ${r.one.toFixed(2)} | ${vs(r.holder, r.one)} | ${vs(r.forwarded, r.one)} | ${vs(r.any, r.one)}`);
  } finally {
    for (const p of procs) p.proc.kill(9);
    await Promise.all(procs.map((p) => p.exited));
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (NODES) await external(NODES);
else await onThisMachine();
