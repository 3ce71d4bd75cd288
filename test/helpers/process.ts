// A real Sluice server process on 127.0.0.1 and a random port, for tests of starts, signals and crashes.
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Socket, Subprocess } from "bun";
import { RUNTIME_ENV } from "../../src/runtime.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SETPRIV = Bun.which("setpriv");

/**
 * diesWithTest makes a spawned program get SIGKILL when the test process ends, however it ends (setpriv's
 * parent-death signal; setpriv then runs the program in its own place, under the same pid): a run cut short leaves
 * no server behind.
 */
export const diesWithTest = (argv: string[]): string[] => (SETPRIV ? [SETPRIV, "--pdeathsig", "KILL", "--", ...argv] : argv);

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  base: string;
  /** everything the server printed on stdout up to "listening" and the banner after it */
  banner: string;
  /** everything printed on stdout so far (access log lines included); stdout is drained so the server never blocks on it */
  output(): string;
  /** exit code after the process ends */
  exited: Promise<number>;
}

/** serverFailure is an error saying what went wrong with what the server printed after its banner (which holds a key): in CI that log is all there is to go on. */
export const serverFailure = (server: ServerProcess, what: string) =>
  new Error(
    `${what} (server exit code ${server.proc.exitCode}, signal ${server.proc.signalCode}); it printed after its banner:\n${server.output().slice(server.banner.length).slice(-8_000)}`,
  );

/**
 * spawnServer starts `bun src/main.ts` on dataDir, with the runtime settings npm start gives it, and resolves once it
 * listens. With SLUICE_TEST_CLUSTER set it starts a cluster of processes in dataDir instead (spawnCluster).
 */
export function spawnServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const mode = process.env.SLUICE_TEST_CLUSTER;
  if (mode) return spawnCluster(dataDir, env, mode === "one" ? "one" : "round-robin", Number(process.env.SLUICE_TEST_CLUSTER_FRONTS || 3));
  return spawnOne(dataDir, env);
}

async function spawnOne(dataDir: string, env: Record<string, string>): Promise<ServerProcess> {
  const proc = Bun.spawn(diesWithTest([process.execPath, "src/main.ts"]), {
    cwd: ROOT,
    env: { ...process.env, ...RUNTIME_ENV, SLUICE_DATA_DIR: dataDir, SLUICE_HOST: "127.0.0.1", SLUICE_PORT: "0", ...env }, // as npm start runs it
    stdout: "pipe",
    stderr: "pipe",
  });
  // one loop drains stdout for the server's whole life: a full pipe would stall it
  let out = "";
  const decoder = new TextDecoder();
  const listening = /listening on (http:\/\/\S+)/;
  let ended = false;
  void (async () => {
    for await (const chunk of proc.stdout) out += decoder.decode(chunk);
    ended = true;
  })();
  // stderr as it comes, so that a failure's message holds what the server said before it
  void (async () => {
    const errors = new TextDecoder();
    for await (const chunk of proc.stderr) out += errors.decode(chunk);
  })();
  // a cluster node restarted after kill -9 of every process waits for the streams to elect leaders before it listens
  const deadline = Date.now() + 30_000;
  while (!listening.test(out)) {
    if (ended) throw new Error(`server exited before listening: ${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    await Bun.sleep(10);
  }
  await Bun.sleep(30); // the banner follows the "listening" line in the same print
  const banner = out;
  const base = listening.exec(banner)![1];
  return { proc, base, banner, output: () => out, exited: proc.exited };
}

/**
 * spawnCluster is spawnServer for a cluster (contract §13) kept in dataDir: 3 nats-server, `sluice cluster init` (whose
 * output is the banner: it makes the first workspace and key), 3 `sluice serve` processes with the given settings (the
 * first `fronts` with every role, the others query and storage), `sluice cluster rebalance`. Its proc is node 0's: when
 * it exits, the other nodes are killed and the NATS servers stopped; started again on dataDir, it is the same cluster.
 * Its base is node 0's URL, or in round-robin mode a proxy that sends each connection to the next front node.
 */
async function spawnCluster(dataDir: string, env: Record<string, string>, mode: "one" | "round-robin", fronts: number): Promise<ServerProcess> {
  const { startNatsCluster } = await import("./nats.ts");
  const nats = await startNatsCluster(3, join(dataDir, "nats"));
  const nodes: ServerProcess[] = [];
  let proxy: { stop(): void } | undefined;
  let initOutput = "";
  const teardown = async () => {
    proxy?.stop();
    for (const n of nodes) n.proc.kill(9);
    await Promise.all(nodes.map((n) => n.exited));
    await nats.stop();
  };
  try {
    const clusterEnv = { ...env, SLUICE_CLUSTER: nats.urls.join(",") };
    const again = existsSync(join(dataDir, "nats", "initialised")); // started again: init and the assignment are kept
    const { waitStreams } = await import("./nats.ts");
    if (again) await waitStreams(nats.urls); // a barrier: every stream has elected its leader again before a node opens it
    if (!again) {
      const init = await runCli(["cluster", "init", "--partitions", "4", "--replicas", "3", "--copies", "2"], clusterEnv);
      if (init.code !== 0) throw new Error(`server exited before listening: ${init.stdout}${init.stderr}`);
      initOutput = init.stdout;
      writeFileSync(join(dataDir, "nats", "initialised"), "");
    }
    const started = await Promise.allSettled(
      [0, 1, 2].map((i) =>
        spawnOne(join(dataDir, `n${i}`), { ...clusterEnv, SLUICE_NODE_ID: `n${i}`, SLUICE_ROLES: i < fronts ? "front,query,storage" : "query,storage" }),
      ),
    );
    for (const r of started) if (r.status === "fulfilled") nodes.push(r.value);
    const failed = started.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    const rebalanced = again ? undefined : await runCli(["cluster", "rebalance"], clusterEnv);
    if (rebalanced && rebalanced.code !== 0) throw new Error(`sluice cluster rebalance failed: ${rebalanced.stderr}`);
    await copiesCaughtUp(nats.urls);
  } catch (e) {
    await teardown();
    throw e;
  }
  void nodes[0].exited.then(teardown);
  const entries = nodes.slice(0, mode === "one" ? 1 : Math.max(1, fronts));
  let base = nodes[0].base;
  if (entries.length > 1) {
    const rr = roundRobinProxy(entries.map((n) => Number(new URL(n.base).port)));
    proxy = rr;
    base = `http://127.0.0.1:${rr.port}`;
  }
  return { ...nodes[0], base, banner: `${nodes[0].banner}\n${initOutput}`, output: () => nodes.map((n) => n.output()).join("") };
}

/** copiesCaughtUp waits (at most 30 s) until every assigned copy of a cluster of processes is open and caught up: a barrier after a rebalance. */
export async function copiesCaughtUp(urls: string[]): Promise<void> {
  const until = Date.now() + 30_000;
  const { clusterStatus } = await import("../../src/cluster/status.ts"); // what `sluice cluster status` reads, without a process each time
  // every copy caught up; the replicas' audit (monitoring ports) is `cluster status`'s own test's to make, not a start's
  const caughtUp = (s: { problems: string[] }) => s.problems.every((line) => line.includes("were not audited"));
  const read = () => clusterStatus(urls, { monitors: [], settleMs: 0 }).then(caughtUp, () => false);
  while (!(await read())) {
    if (Date.now() > until) throw new Error("the cluster's copies did not catch up within 30 s (sluice cluster status)");
    await Bun.sleep(100);
  }
}

/** roundRobinProxy listens on 127.0.0.1 and pipes each connection, both ways, to the next of `ports`. */
function roundRobinProxy(ports: number[]) {
  let turn = 0;
  // what a side could not take yet waits in `queue` and goes on its drain; a side closing ends the other once flushed
  type Side = { peer?: Socket<Side>; queue: Uint8Array[]; ending: boolean };
  const flush = (to: Socket<Side>) => {
    while (to.data.queue.length) {
      const chunk = to.data.queue[0];
      const wrote = to.write(chunk);
      if (wrote < chunk.byteLength) {
        to.data.queue[0] = chunk.subarray(Math.max(0, wrote));
        return;
      }
      to.data.queue.shift();
    }
    if (to.data.ending) to.end();
  };
  const send = (to: Socket<Side> | undefined, chunk: Uint8Array) => {
    if (!to) return;
    to.data.queue.push(new Uint8Array(chunk));
    if (to.data.queue.length === 1) flush(to);
  };
  const end = (to: Socket<Side> | undefined) => {
    if (!to) return;
    to.data.ending = true;
    if (to.data.queue.length === 0) to.end();
  };
  const server = Bun.listen<Side>({
    hostname: "127.0.0.1",
    port: 0,
    socket: {
      open(client) {
        client.data = { queue: [], ending: false };
        const early: Uint8Array[] = [];
        (client.data as Side & { early?: Uint8Array[] }).early = early;
        void Bun.connect<Side>({
          hostname: "127.0.0.1",
          port: ports[turn++ % ports.length],
          socket: {
            open(upstream) {
              upstream.data = { peer: client, queue: [], ending: false };
              client.data.peer = upstream;
              for (const chunk of early) send(upstream, chunk);
            },
            data: (upstream, chunk) => send(upstream.data.peer, chunk),
            drain: flush,
            close: (upstream) => end(upstream.data.peer),
            error: (upstream) => end(upstream.data.peer),
          },
        }).catch(() => client.end());
      },
      data(client, chunk) {
        if (client.data.peer) send(client.data.peer, chunk);
        else (client.data as Side & { early: Uint8Array[] }).early.push(new Uint8Array(chunk));
      },
      drain: flush,
      close: (client) => end(client.data.peer),
      error: (client) => end(client.data.peer),
    },
  });
  return { port: server.port, stop: () => server.stop(true) };
}

/** runCli runs `bun src/cli/main.ts ...args` and returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, "src/cli/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
