// Three nats-server processes with JetStream, clustered on 127.0.0.1 (random free ports, temporary store directories).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { diesWithTest } from "./process.ts";
import { natsServers } from "../../src/cluster/names.ts";

export interface NatsCluster {
  /** client URLs, one a server */
  urls: string[];
  /** monitoring URLs (`http:` in each server's config), in the order of `urls`: each server's own view of its streams */
  monitors: string[];
  /** server names, in the order of `urls` */
  names: string[];
  /** pause(i) stops server i without ending it (SIGSTOP): it answers nothing, its peers go on; resume(i) lets it run on (SIGCONT) */
  pause(i: number): void;
  resume(i: number): void;
  /** the client URLs as account `a<i>` (of `accounts`, each its own JetStream: streams and buckets apart) */
  accountUrls(i: number): string[];
  /** kill9 kills server i at once (kill -9); start(i) starts it again on the same ports and store */
  kill9(i: number): void;
  start(i: number): Promise<void>;
  stop(): Promise<void>;
  /** stopNow kills every server and removes the store at once (for a process's exit, which waits for nothing) */
  stopNow(): void;
}

/** freePort asks the kernel for a port nobody listens on (a listener on port 0, closed at once). */
export function freePort(): number {
  const s = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = s.port;
  s.stop(true);
  return port;
}

/**
 * startNatsCluster starts `n` JetStream servers routed to each other and resolves once every one takes clients. A
 * server that could not bind its ports (another process took one between freePort and its start) exits: then all are
 * stopped and started again on new ports, at most three times. Given `home`, the servers keep their stores there (and
 * stop() leaves them): started again on the same home, they are the same cluster on new ports, its streams kept.
 * With `accounts`, the servers have that many accounts with JetStream (a0, the default, a1, …): several Sluice
 * clusters can share the servers, each in an account of its own.
 */
export async function startNatsCluster(n = 3, home?: string, accounts = 1): Promise<NatsCluster> {
  for (let attempt = 1; ; attempt++) {
    const cluster = await startOnce(n, home, accounts);
    await Bun.sleep(200);
    if (cluster.alive()) return cluster;
    await cluster.stop();
    if (attempt >= 3) throw new Error("nats-server exited right after starting, three times (ports taken?)");
  }
}

async function startOnce(n: number, home: string | undefined, accounts: number): Promise<NatsCluster & { alive(): boolean }> {
  const dir = home ?? mkdtempSync(join(tmpdir(), "sluice-nats-"));
  if (home) mkdirSync(home, { recursive: true });
  const ports = Array.from({ length: n }, () => ({ client: freePort(), route: freePort(), http: freePort() }));
  const procs: (Subprocess | undefined)[] = [];
  const confs = ports.map((p, i) => {
    const store = join(dir, `s${i}`);
    mkdirSync(store, { recursive: true });
    const routes = ports.filter((_, j) => j !== i).map((q) => `"nats-route://127.0.0.1:${q.route}"`);
    const conf = join(dir, `s${i}.conf`);
    writeFileSync(
      conf,
      [
        `server_name: s${i}`,
        `listen: "127.0.0.1:${p.client}"`,
        `http: "127.0.0.1:${p.http}"`,
        "max_payload: 8MB",
        `jetstream { store_dir: "${store}", max_memory_store: 64MB, max_file_store: 4GB }`,
        `cluster { name: sluice, listen: "127.0.0.1:${p.route}", routes: [${routes.join(", ")}] }`,
        ...(accounts > 1
          ? [
              `accounts { ${Array.from({ length: accounts }, (_, a) => `a${a}: { jetstream: enabled, users: [{ user: a${a}, password: a${a} }] }`).join(", ")} }`,
              "no_auth_user: a0",
            ]
          : []),
      ].join("\n"),
    );
    return conf;
  });
  const start = async (i: number) => {
    const proc = Bun.spawn(diesWithTest(["nats-server", "-c", confs[i]]), {
      env: { ...process.env }, // as it is now: Bun.spawn's default is the environment the process started with
      stdout: "ignore",
      stderr: process.env.NATS_DEBUG_LOG ? Bun.file(`${process.env.NATS_DEBUG_LOG}-${ports[i].client}`) : "ignore",
    });
    procs[i] = proc;
    await waitListening(ports[i].client, proc);
  };
  await Promise.all(ports.map((_, i) => start(i)));
  const alive = () => procs.every((p) => p !== undefined && p.exitCode === null && p.signalCode === null);
  if (alive()) await waitJetStream(ports.map((p) => `nats://127.0.0.1:${p.client}`));
  return {
    alive,
    urls: ports.map((p) => `nats://127.0.0.1:${p.client}`),
    monitors: ports.map((p) => `http://127.0.0.1:${p.http}`),
    names: ports.map((_, i) => `s${i}`),
    pause(i) {
      procs[i]?.kill("SIGSTOP");
    },
    resume(i) {
      procs[i]?.kill("SIGCONT");
    },
    accountUrls: (a) => ports.map((p) => `nats://a${a}:a${a}@127.0.0.1:${p.client}`),
    kill9(i) {
      procs[i]?.kill(9);
      procs[i] = undefined;
    },
    start,
    stopNow() {
      for (const p of procs) p?.kill(9);
      if (!home) rmSync(dir, { recursive: true, force: true });
    },
    async stop() {
      for (const p of procs) p?.kill(9); // a paused server dies of SIGKILL too
      await Promise.all(procs.map((p) => p?.exited));
      if (!home) rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** waitJetStream waits (at most 20 s) until the servers have elected a JetStream meta leader and answer its API. */
export async function waitJetStream(urls: string[]): Promise<void> {
  const nc = await connect({ servers: urls });
  try {
    const until = Date.now() + 20_000;
    for (;;) {
      try {
        await jetstreamManager(nc, { timeout: 1000 });
        return;
      } catch (e) {
        if (Date.now() > until) throw new Error(`JetStream did not come up within 20 s: ${e}`);
        await Bun.sleep(200);
      }
    }
  } finally {
    await nc.close();
  }
}

/** waitStreams waits (at most 30 s) until every stream has a leader: after a restart of every server, they elect them anew. */
export async function waitStreams(urls: string[]): Promise<void> {
  const nc = await connect(natsServers(urls)); // the account of the URLs' user

  try {
    const jsm = await jetstreamManager(nc, { timeout: 2000 });
    const until = Date.now() + 30_000;
    for (;;) {
      const leaderless: string[] = [];
      try {
        for await (const name of jsm.streams.names()) {
          const info = await jsm.streams.info(name).catch(() => undefined);
          if (!info?.cluster?.leader) leaderless.push(name);
        }
      } catch {
        leaderless.push("(the stream list)");
      }
      if (leaderless.length === 0) return;
      if (Date.now() > until) throw new Error(`streams without a leader 30 s after a restart: ${leaderless.join(", ")}`);
      await Bun.sleep(200);
    }
  } finally {
    await nc.close();
  }
}

/** waitListening waits until a server takes connections on `port`, or its process has exited (a port of its was taken). */
async function waitListening(port: number, proc: Subprocess): Promise<void> {
  const until = Date.now() + 10_000;
  while (Date.now() < until) {
    if (proc.exitCode !== null || proc.signalCode !== null) return; // startNatsCluster starts them again on other ports
    const ok = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } }).then(
      (s) => {
        s.end();
        return true;
      },
      () => false,
    );
    if (ok) return;
    await Bun.sleep(50);
  }
  throw new Error(`nats-server on port ${port} did not start within 10 s; is nats-server installed (apt-get install nats-server)?`);
}
