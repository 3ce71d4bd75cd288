// Durability of alert notices (contract §16): kill -9 of a real server process while a rule fires, then a restart.
// No incident is announced twice as firing, and its resolved notice arrives once, also when it resolved while the
// server was down. The rule is evaluated every second (SLUICE_ALERT_MIN_EVERY=1s) on the real clock.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpReceiver } from "../helpers/receivers.ts";
import { spawnServer, type ServerProcess } from "../helpers/process.ts";

const ADMIN = "alerts-crash-admin";
const ENV = { SLUICE_ADMIN_TOKEN: ADMIN, SLUICE_ALERT_MIN_EVERY: "1s", SLUICE_IP_RATE_PER_MIN: "-1", SLUICE_ACCESS_LOG: "off" };
const dir = mkdtempSync(join(tmpdir(), "sluice-alerts-crash-"));
const hook = httpReceiver();
let server: ServerProcess | undefined;
afterAll(() => {
  server?.proc.kill(9);
  hook.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function call(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const r = await fetch(`${server!.base}${path}`, { method, headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** until waits for a condition, checking every 50 ms, at most `ms`. */
async function until(what: string, ok: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received: ${JSON.stringify(notices())}`);
    await Bun.sleep(50);
  }
}

const notices = () => hook.got.map((g) => JSON.parse(g.body).status as string);

async function crashAndRestart() {
  server!.proc.kill(9);
  await server!.exited;
}

test("kill -9 while a rule fires: no second firing notice, and the resolved notice arrives once, also when it resolved while the server was down", async () => {
  server = await spawnServer(dir, ENV);
  const admin = { authorization: `Bearer ${ADMIN}` };
  const ws = await call("POST", "/api/v1/admin/workspaces", { name: "crash", plan: "unlimited" }, admin);
  const key = await call("POST", `/api/v1/admin/workspaces/${ws.body.id}/keys`, { environment: "development", type: "rw", scopes: ["*"] }, admin);
  const auth = { "x-api-key": key.body.key as string };
  const ch = await call("POST", "/api/v1/workspace/alerts/channels", { name: "hook", type: "webhook", config: { url: hook.url } }, auth);
  expect(ch.status).toBe(201);
  const rule = { name: "crash", query: "level=error", condition: { op: ">", threshold: 0 }, window: "6s", every: "1s", channels: [ch.body.id] };
  expect((await call("POST", "/api/v1/workspace/alerts/rules", rule, auth)).status).toBe(201);

  let writing = true;
  const writer = (async () => {
    while (writing) {
      await fetch(`${server!.base}/api/v1/workspace/logs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: JSON.stringify({ action: "pay", level: "error", clientTimestamp: new Date().toISOString() }),
      }).catch(() => {}); // refused while the server is down
      await Bun.sleep(200);
    }
  })();

  // incident 1: fires, the server is killed while it still fires and restarted; errors keep coming for a while
  await until("the first firing notice", () => notices().length >= 1, 10_000);
  await Bun.sleep(300); // the delivery's outcome is committed
  await crashAndRestart();
  server = await spawnServer(dir, ENV);
  await Bun.sleep(3000); // three evaluations, each still firing (the 6 s window outlasts the restart)
  expect(notices()).toEqual(["firing"]);
  writing = false;
  await writer;
  await until("the resolved notice", () => notices().length >= 2, 15_000);

  // incident 2: fires, the server is killed, the errors stop and the window empties while it is down
  writing = true;
  const writer2 = (async () => {
    while (writing) {
      await fetch(`${server!.base}/api/v1/workspace/logs`, {
        method: "POST",
        headers: { "content-type": "application/json", ...auth },
        body: JSON.stringify({ action: "pay", level: "error", clientTimestamp: new Date().toISOString() }),
      });
      await Bun.sleep(200);
    }
  })();
  await until("the second incident's firing notice", () => notices().length >= 3, 10_000);
  writing = false;
  await writer2;
  await Bun.sleep(300);
  await crashAndRestart();
  await Bun.sleep(6500); // the window passes while the server is down
  server = await spawnServer(dir, ENV);
  await until("the resolved notice after the start", () => notices().length >= 4, 15_000);
  await Bun.sleep(1500); // nothing more comes
  expect(notices()).toEqual(["firing", "resolved", "firing", "resolved"]);
}, 60_000);
