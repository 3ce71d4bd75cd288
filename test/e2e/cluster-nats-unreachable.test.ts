// Contract §13: a node that cannot reach NATS answers writes 503 with Retry-After and /readyz 503, also when it starts
// before NATS (machines reboot in any order): it keeps running, and joins once NATS comes. Real processes: 3 nats-server
// and one `sluice serve --cluster`; the node is stopped, every NATS server killed, the node started again, and the
// NATS servers started ~5 s later on their ports and stores.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startNatsCluster, type NatsCluster } from "../helpers/nats.ts";
import { copiesCaughtUp, runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { ADMIN_TOKEN, WS, entry } from "../helpers/sluice.ts";

let nats: NatsCluster;
let dir: string;
let node: ServerProcess | undefined;
let env: Record<string, string>;
let key: string;

const startNode = async () => {
  node = await spawnServer(join(dir, "n0"), { ...env, SLUICE_NODE_ID: "n0", SLUICE_ACCESS_LOG: "off" });
  return node;
};

/** write posts a batch of `n` entries and returns the answer's status, Retry-After and ids (none unless 201). */
async function write(base: string, n: number, tag: string) {
  const r = await fetch(`${base}${WS}/logs/bulk`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(Array.from({ length: n }, (_, k) => entry({ action: `${tag}.${k}` }))),
    signal: AbortSignal.timeout(20_000),
  });
  const body = (await r.json()) as { ids?: string[]; error_code?: string };
  return { status: r.status, retryAfter: r.headers.get("retry-after"), code: body.error_code, ids: body.ids ?? [] };
}

/** status answers a GET's status, or 0 when the connection failed (the node swapping its listener). */
const status = (url: string) =>
  fetch(url, { signal: AbortSignal.timeout(5000) }).then(
    (r) => r.status,
    () => 0,
  );

beforeAll(async () => {
  nats = await startNatsCluster(3);
  dir = mkdtempSync(join(tmpdir(), "sluice-nats-unreachable-"));
  env = { SLUICE_CLUSTER: nats.urls.join(","), SLUICE_ADMIN_TOKEN: ADMIN_TOKEN, SLUICE_IP_RATE_PER_MIN: "-1" };
  const init = await runCli(["cluster", "init", "--partitions", "2", "--replicas", "3", "--copies", "1"], env);
  expect(init.code).toBe(0);
  key = /API key \(shown only now\):\s+(\S+)/.exec(init.stdout)![1];
  await startNode();
  expect((await runCli(["cluster", "rebalance"], env)).code).toBe(0);
  await copiesCaughtUp(nats.urls);
}, 90_000);

afterAll(async () => {
  node?.proc.kill(9);
  await node?.exited;
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

test("a node that starts before NATS answers /healthz 200, /readyz 503 and writes 503 with Retry-After, then joins once NATS comes: writes 201, nothing lost", async () => {
  const before = await write(node!.base, 20, "before");
  expect(before.status).toBe(201);
  node!.proc.kill("SIGTERM");
  expect(await node!.exited).toBe(0);
  for (const i of [0, 1, 2]) nats.kill9(i);

  const waiting = await startNode(); // NATS is down: the node listens and waits
  expect(await status(`${waiting.base}/healthz`)).toBe(200);
  const ready = await fetch(`${waiting.base}/readyz`);
  expect(ready.status).toBe(503);
  const why = (await ready.json()) as { reason: string; message: string };
  expect(why.reason).toBe("nats_unreachable");
  expect(why.message).toContain("SLUICE_CLUSTER");
  const refused = await write(waiting.base, 5, "refused");
  expect(refused).toMatchObject({ status: 503, code: "INTERNAL_LOG_SERVICE_ERROR", ids: [] });
  expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);

  await Bun.sleep(5000);
  expect(waiting.proc.exitCode).toBeNull(); // still waiting, not exited
  expect(await status(`${waiting.base}/readyz`)).toBe(503);
  await Promise.all([0, 1, 2].map((i) => nats.start(i))); // on the same ports and stores

  // writes go on while the node joins: each is refused 503 with Retry-After or acknowledged 201, never lost
  const acked = [...before.ids];
  const answers: { status: number; retryAfter: string | null }[] = [];
  let joined = false;
  let cut = 0;
  const writer = (async () => {
    for (let n = 0; !joined; n++) {
      const r = await write(waiting.base, 5, `joining${n}`).catch(() => undefined);
      if (!r)
        cut++; // a connection cut as the node's own server takes over from the waiting one: nothing acknowledged
      else {
        answers.push(r);
        acked.push(...r.ids);
      }
      await Bun.sleep(100);
    }
  })();
  const until = Date.now() + 60_000;
  while ((await status(`${waiting.base}/readyz`)) !== 200 && Date.now() < until) await Bun.sleep(250);
  expect(await status(`${waiting.base}/readyz`)).toBe(200);
  await Bun.sleep(1000);
  joined = true;
  await writer;
  expect(answers.filter((a) => !(a.status === 201 || (a.status === 503 && Number(a.retryAfter) >= 1)))).toEqual([]);
  expect(answers.filter((a) => a.status === 201).length).toBeGreaterThan(0);
  expect(cut).toBeLessThanOrEqual(1);
  const refusedWhileJoining = answers.filter((a) => a.status === 503).length;
  console.error(`writes while the node joined: ${refusedWhileJoining} refused 503, ${answers.length - refusedWhileJoining} acknowledged, ${cut} cut`);
  for (let n = 0; n < 5; n++) {
    const after = await write(waiting.base, 20, `after${n}`);
    expect(after.status).toBe(201);
    acked.push(...after.ids);
  }
  expect(acked.length).toBeGreaterThanOrEqual(125);
  for (const id of acked) {
    const r = await fetch(`${waiting.base}${WS}/logs/${id}`, { headers: { "x-api-key": key } });
    expect({ id, status: r.status }).toEqual({ id, status: 200 });
    expect(((await r.json()) as { id: string }).id).toBe(id);
  }
}, 120_000);
