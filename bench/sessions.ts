// Sessions: what a web explorer session check costs on the read path, now that sessions are stored in the meta
// database (a cluster's mirror of the shared bucket) instead of a process's memory. Three figures, each beside its
// baseline from the same run:
//   1. one check (Sessions.keyHashOf) against the in-memory lookup it replaced (a Map of token hashes);
//   2. GET /api/v1/workspace/info through one process's app.handle, by session cookie against by API key;
//   3. the same through a cluster node's handle (3 nats-server, 3 nodes in this process), cookie against key, and a
//      request that records a session's use in the bucket (a node's first of a session, then once a minute) against the next.
// Bounded: about half a minute. `npm run bench:sessions`.
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hashSecret } from "../src/auth/keys.ts";
import { compose } from "../src/compose.ts";
import { PlanTable } from "../src/limits/plans.ts";
import { startTestCluster } from "../test/helpers/cluster.ts";
import { median } from "./servers.ts";

const CHECKS = 200_000;
const REQUESTS = Number(process.env.BENCH_SESSION_REQUESTS || 4000);
const ROUNDS = 5;

/** perCall runs fn n times and gives the µs a call took, as the median of ROUNDS rounds. */
function perCall(n: number, fn: (i: number) => void): number {
  const rounds: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) fn(i);
    rounds.push(((performance.now() - t) * 1000) / n);
  }
  return median(rounds);
}

/** p50 sends `send` n times, in turns of the two kinds, and gives each kind's median ms. */
async function p50(n: number, send: { a: () => Promise<Response>; b: () => Promise<Response> }) {
  const a: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < n; i++) {
    for (const [kind, times] of [
      [send.a, a],
      [send.b, b],
    ] as const) {
      const t = performance.now();
      const r = await kind();
      if (r.status !== 200) throw new Error(`BUG: GET /info answered ${r.status}: ${await r.text()}`);
      await r.arrayBuffer();
      times.push(performance.now() - t);
    }
  }
  return { a: median(a), b: median(b) };
}

const fmt = (x: number, unit: string) => `${x.toFixed(unit === "µs" ? 2 : 3)} ${unit}`;

// 1 and 2: one process
const dir = mkdtempSync(join(tmpdir(), "sluice-bench-sessions-"));
const s = compose({ dataDir: dir, plans: new PlanTable(), adminToken: "bench", ipRatePerMinute: -1, log: () => {}, storageLog: () => {} });
const ws = await s.admin.createWorkspace({ name: "bench", plan: "unlimited" });
const { key } = await s.admin.createKey(ws.id, { environment: "production", type: "ro" });
const now = Date.now();
const token = await s.sessions.start(hashSecret(key), now);
if (s.sessions.keyHashOf(token, now) !== hashSecret(key)) throw new Error("BUG: the session does not stand for its key");
const memory = new Map([[createHash("sha256").update(token).digest("base64url"), { keyHash: hashSecret(key), startedMs: now, lastMs: now }]]);
const stored = perCall(CHECKS, (i) => s.sessions.keyHashOf(token, now + i));
const inMemory = perCall(CHECKS, (i) => {
  const m = memory.get(createHash("sha256").update(token).digest("base64url"))!;
  m.lastMs = now + i;
});
console.log(`one session check: ${fmt(stored, "µs")} stored (meta LMDB) | baseline in memory ${fmt(inMemory, "µs")}`);

const get = (headers: Record<string, string>) => () => s.app.handle(new Request("http://localhost/api/v1/workspace/info", { headers }));
const cookie = `sluice_session=${token}`;
const one = await p50(REQUESTS, { a: get({ cookie }), b: get({ "x-api-key": key }) });
console.log(`GET /info, one process: ${fmt(one.a, "ms")} by session cookie | baseline by API key ${fmt(one.b, "ms")}`);
await s.close();
rmSync(dir, { recursive: true, force: true });

// 3: a cluster node
const c = await startTestCluster({ partitions: 2 });
try {
  const cws = await c.workspace();
  const ckey = await cws.key("production", "ro");
  const signIn = await c.call(0, "POST", "/ui/session", { body: { key: ckey } });
  const ccookie = (signIn.headers.get("set-cookie") ?? "").split(";")[0];
  const viaNode = (i: number, headers: Record<string, string>) => () => c.call(i, "GET", "/api/v1/workspace/info", { headers });
  const node1 = await p50(REQUESTS, { a: viaNode(1, { cookie: ccookie }), b: viaNode(1, { "x-api-key": ckey }) });
  console.log(`GET /info, cluster node 1 (signed in on node 0): ${fmt(node1.a, "ms")} by session cookie | baseline by API key ${fmt(node1.b, "ms")}`);
  // a node records a session's use in the bucket at most once a minute, and that request waits for the bucket
  const recording: number[] = [];
  const after: number[] = [];
  for (let i = 0; i < 100; i++) {
    const r = await c.call(0, "POST", "/ui/session", { body: { key: ckey } });
    const cookie = (r.headers.get("set-cookie") ?? "").split(";")[0];
    for (const times of [recording, after]) {
      const t = performance.now();
      const got = await viaNode(2, { cookie })();
      if (got.status !== 200) throw new Error(`BUG: GET /info answered ${got.status}`);
      times.push(performance.now() - t);
    }
  }
  console.log(
    `GET /info, cluster node 2, a request that records the use: ${fmt(median(recording), "ms")} | baseline the next request ${fmt(median(after), "ms")}`,
  );
} finally {
  await c.close();
}
