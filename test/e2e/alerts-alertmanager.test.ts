// Sluice → Debian's prometheus-alertmanager → the test's webhook receiver (contract §16): Sluice's alerts arrive at a
// real Alertmanager through its v2 API, and Alertmanager's own notification reaches the receiver as firing, then
// resolved. The server's own timers evaluate the rule every second on the real clock. .ci/run installs the package.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { diesWithTest } from "../helpers/process.ts";
import { httpReceiver } from "../helpers/receivers.ts";
import { removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

const BIN = Bun.which("prometheus-alertmanager") ?? Bun.which("alertmanager");
const dir = mkdtempSync(join(tmpdir(), "sluice-am-"));
const hook = httpReceiver();
let am: Subprocess | undefined;
let amUrl = "";
let s: TestSluice;

/** freePort asks the system for a port nobody listens on. */
function freePort(): number {
  const probe = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("") });
  const port = probe.port!;
  probe.stop(true);
  return port;
}

beforeAll(async () => {
  if (!BIN) throw new Error("prometheus-alertmanager is not installed: apt-get install prometheus-alertmanager (.ci/run does)");
  const config = join(dir, "alertmanager.yml");
  writeFileSync(
    config,
    [
      "route:",
      "  receiver: hook",
      "  group_by: [alertname]",
      "  group_wait: 0s",
      "  group_interval: 1s",
      "  repeat_interval: 1h",
      "receivers:",
      "  - name: hook",
      "    webhook_configs:",
      `      - url: ${hook.url}/am`,
      "        send_resolved: true",
      "",
    ].join("\n"),
  );
  const port = freePort();
  amUrl = `http://127.0.0.1:${port}`;
  am = Bun.spawn(
    diesWithTest([
      BIN,
      `--config.file=${config}`,
      `--storage.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--cluster.listen-address=",
    ]),
    { stdout: "ignore", stderr: "ignore" },
  );
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ready = await fetch(`${amUrl}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) throw new Error("alertmanager did not become ready within 15 s");
    await Bun.sleep(100);
  }
  s = startTestSluice(undefined, { alertMinEveryMs: 1000 });
  s.svc.evaluator.start(100);
  s.svc.deliverer.start();
});
afterAll(async () => {
  await s?.close();
  if (s) removeDir(s.dir);
  am?.kill();
  await am?.exited;
  hook.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function until(what: string, ok: () => boolean, ms: number) {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; received ${hook.got.map((g) => g.body).join("\n")}`);
    await Bun.sleep(50);
  }
}

test("Sluice's alerts reach Alertmanager, whose notification reaches a webhook receiver as firing, then resolved", async () => {
  const key = await (await s.workspace()).key("development", "rw", { scopes: ["*"] });
  const post = async (path: string, body: unknown) => {
    const r = await s.call("POST", `${WS}${path}`, { key, body });
    expect(r.status).toBe(201);
    return (await r.json()) as { id: string };
  };
  const ch = await post("/alerts/channels", { name: "am", type: "alertmanager", config: { url: amUrl } });
  await post("/alerts/rules", {
    name: "SluiceErrors",
    query: "level=error",
    condition: { op: ">", threshold: 0 },
    window: "2s",
    every: "1s",
    group_by: ["action"],
    channels: [ch.id],
  });
  await post("/logs", { action: "pay", level: "error", clientTimestamp: new Date().toISOString() });
  const statuses = () => hook.got.map((g) => JSON.parse(g.body) as { status: string; alerts: { labels: Record<string, string> }[] });
  await until("Alertmanager's firing notification", () => statuses().some((b) => b.status === "firing"), 15_000);
  const firing = statuses().find((b) => b.status === "firing")!;
  expect(firing.alerts[0].labels).toEqual({ alertname: "SluiceErrors", action: "pay" });
  await until("Alertmanager's resolved notification", () => statuses().some((b) => b.status === "resolved"), 15_000);
  expect(statuses().map((b) => b.status)).toEqual(["firing", "resolved"]);
}, 40_000);
