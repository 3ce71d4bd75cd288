// sluice alerts list|create|test-channel against a real server process (contract §16's CLI commands).
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { httpReceiver } from "../helpers/receivers.ts";
import { runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";

const ADMIN = "alerts-cli-admin";
const dir = mkdtempSync(join(tmpdir(), "sluice-alerts-cli-"));
const hook = httpReceiver();
let server: ServerProcess;
let key: string;

beforeAll(async () => {
  server = await spawnServer(join(dir, "data"), { SLUICE_ADMIN_TOKEN: ADMIN, SLUICE_ACCESS_LOG: "off" });
  const admin = { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" };
  const ws = (await (
    await fetch(`${server.base}/api/v1/admin/workspaces`, { method: "POST", headers: admin, body: JSON.stringify({ name: "cli", plan: "unlimited" }) })
  ).json()) as {
    id: string;
  };
  const made = await fetch(`${server.base}/api/v1/admin/workspaces/${ws.id}/keys`, {
    method: "POST",
    headers: admin,
    body: JSON.stringify({ environment: "development", type: "rw", scopes: ["*"] }),
  });
  key = ((await made.json()) as { key: string }).key;
}, 60_000);
afterAll(async () => {
  server.proc.kill("SIGTERM");
  await server.exited;
  hook.stop();
  rmSync(dir, { recursive: true, force: true });
});
const cli = (...args: string[]) => runCli([...args, "--url", server.base, "--key", key]);

test("alerts create FILE makes its channels first, then its rules; alerts list shows them; test-channel sends a test notice", async () => {
  const file = join(dir, "alerts.json");
  writeFileSync(
    file,
    JSON.stringify([
      { name: "errors", query: "level=error", condition: { op: ">", threshold: 1 }, window: "5m", every: "1m" },
      { name: "hook", type: "webhook", config: { url: hook.url } },
    ]),
  );
  const made = await cli("alerts", "create", file);
  expect(made.code).toBe(0);
  const rules = await cli("alerts", "list", "rules");
  expect(rules.code).toBe(0);
  expect(JSON.parse(rules.stdout)).toMatchObject([{ name: "errors", for: "0s", repeat_interval: "4h" }]);
  const channels = JSON.parse((await cli("alerts", "list", "channels")).stdout) as { id: string }[];
  const tested = await cli("alerts", "test-channel", channels[0].id);
  expect(tested.code).toBe(0);
  expect(JSON.parse(tested.stdout)).toEqual({ delivered: true, status: 200, attempts: 1 });
  expect(hook.got).toHaveLength(1);
});

test("a rule the server refuses exits 1 with its error; an unknown list exits 2", async () => {
  const file = join(dir, "bad.json");
  writeFileSync(file, JSON.stringify({ name: "bad", query: "level=error", condition: { op: ">", threshold: 1 }, window: "5m", every: "1s" }));
  const r = await cli("alerts", "create", file);
  expect(r.code).toBe(1);
  expect(JSON.parse(r.stdout).details.errors[0].field).toBe("every");
  expect((await cli("alerts", "list", "nope")).code).toBe(2);
});
