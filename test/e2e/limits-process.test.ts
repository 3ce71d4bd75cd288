// Limits in the real server process: SLUICE_PLANS_FILE (good and bad), SLUICE_IP_RATE_PER_MIN, SLUICE_TRUST_PROXY, usage across kill -9.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer, type ServerProcess } from "../helpers/process.ts";
import { entry } from "../helpers/sluice.ts";

const ROOT = join(import.meta.dir, "..", "..");
const ADMIN = "limits-admin-token";
const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;

const dirs: string[] = [];
const running: ServerProcess[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), "sluice-limits-"));
  dirs.push(d);
  return d;
};
const start = async (dir: string, env: Record<string, string> = {}) => {
  const s = await spawnServer(dir, { SLUICE_ADMIN_TOKEN: ADMIN, ...env });
  running.push(s);
  return s;
};
const stop = async (s: ServerProcess) => {
  s.proc.kill("SIGTERM");
  expect(await s.exited).toBe(0);
};
afterAll(() => {
  for (const s of running) if (s.proc.exitCode === null) s.proc.kill(9);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** failedStart runs the server where it is expected to refuse to start; it must exit on its own within 15 s. */
async function failedStart(dataDir: string, env: Record<string, string>) {
  const proc = Bun.spawn([process.execPath, "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_DATA_DIR: dataDir, SLUICE_HOST: "127.0.0.1", SLUICE_PORT: "0", SLUICE_ADMIN_TOKEN: ADMIN, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(9), 15_000);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(timer);
  return { code, stdout, stderr, killed: proc.signalCode !== null };
}

/** plansFile writes a plans document (or raw text) to a fresh file. */
function plansFile(content: unknown): string {
  const path = join(freshDir(), "plans.json");
  writeFileSync(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

const team = {
  code: "team",
  logs_per_month: 20_000,
  log_retention_days: 30,
  requests_per_minute: 200,
  validate_requests_per_minute: 50,
  max_log_size: 900,
  max_batch_size: 100,
  max_metadata_depth: 4,
  max_tags: 8,
};
const call = (base: string, method: string, path: string, key: string, body?: unknown, headers: Record<string, string> = {}) =>
  fetch(`${base}/api/v1/workspace${path}`, {
    method,
    headers: { "x-api-key": key, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
const admin = (base: string, method: string, path: string, body?: unknown) =>
  fetch(`${base}/api/v1/admin${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
/** keyOn makes a workspace on a plan through the admin API and returns a development rw key. */
async function keyOn(base: string, plan: string): Promise<string> {
  const ws = await admin(base, "POST", "/workspaces", { name: `ws-${plan}`, plan });
  expect(ws.status).toBe(201);
  const key = await admin(base, "POST", `/workspaces/${(await ws.json()).id}/keys`, { environment: "development", type: "rw" });
  return (await key.json()).key;
}

describe("SLUICE_PLANS_FILE", () => {
  // [what is wrong, what stderr must name, file content]
  const bad: [string, string, unknown][] = [
    ["not JSON", "SLUICE_PLANS_FILE", "{plans: ["],
    ["no plans array", "plans", { plan: [team] }],
    ["a numeric field missing", "plans[0].max_tags", { plans: [{ ...team, max_tags: undefined }] }],
    ["a field of 0", "plans[1].requests_per_minute", { plans: [team, { ...team, code: "tiny", requests_per_minute: 0 }] }],
    ["an unknown field", "plans[0].burst", { plans: [{ ...team, burst: 5 }] }],
    ["a duplicate code", "plans[1].code", { plans: [team, team] }],
  ];
  test.each(bad)("a file with %s stops the server: it exits non-zero and prints %p", async (_what, field, content) => {
    const r = await failedStart(freshDir(), { SLUICE_PLANS_FILE: plansFile(content) });
    expect(r.killed).toBe(false);
    expect(r.code).not.toBe(0);
    expect(r.stdout).not.toContain("listening");
    expect(r.stderr).toContain(field);
  });

  test("a missing file stops the server, naming the file", async () => {
    const path = join(freshDir(), "absent.json");
    const r = await failedStart(freshDir(), { SLUICE_PLANS_FILE: path });
    expect({ code: r.code === 0, named: r.stderr.includes(path) }).toEqual({ code: false, named: true });
  });

  test("a valid file overrides a built-in plan and adds a new one; the others stay", async () => {
    const tinyFree = { ...team, code: "free", logs_per_month: 2, max_batch_size: 5 };
    const s = await start(freshDir(), { SLUICE_PLANS_FILE: plansFile({ plans: [tinyFree, team] }) });
    const free = await keyOn(s.base, "free");
    expect(await (await call(s.base, "GET", "/usage", free)).json()).toMatchObject({ plan_code: "free", limit: 2 });
    expect((await call(s.base, "POST", "/logs/bulk", free, [entry(), entry()])).status).toBe(201);
    expect((await (await call(s.base, "POST", "/logs", free, entry())).json()).error_code).toBe("QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");

    const teamKey = await keyOn(s.base, "team");
    const info = await call(s.base, "GET", "/info", teamKey);
    expect(info.headers.get("x-ratelimit-limit")).toBe("200");
    expect((await info.json()).plan).toEqual({ code: "team", logs_per_month: 20_000, log_retention_days: 30, max_batch_size: 100, max_log_size: 900 });
    const developer = await keyOn(s.base, "developer");
    expect((await (await call(s.base, "GET", "/usage", developer)).json()).limit).toBe(50_000);
    await stop(s);
  }, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine
});

describe("client IP limits in the process", () => {
  test("SLUICE_IP_RATE_PER_MIN limits each client; with SLUICE_TRUST_PROXY 0 X-Forwarded-For is ignored", async () => {
    const s = await start(freshDir(), { SLUICE_IP_RATE_PER_MIN: "2" });
    const key = KEY.exec(s.banner)![1];
    const codes = [];
    for (const ip of ["1.1.1.1", "2.2.2.2", "3.3.3.3"]) codes.push((await call(s.base, "GET", "/usage", key, undefined, { "x-forwarded-for": ip })).status);
    expect(codes).toEqual([200, 200, 429]);
    const refused = await call(s.base, "GET", "/usage", key);
    expect((await refused.json()).error_code).toBe("RATE_LIMIT_IP_EXCEEDED");
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    await stop(s);
  }, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine

  test("with SLUICE_TRUST_PROXY 1 each forwarded client has its own bucket", async () => {
    const s = await start(freshDir(), { SLUICE_IP_RATE_PER_MIN: "1", SLUICE_TRUST_PROXY: "1" });
    const key = KEY.exec(s.banner)![1];
    const status = async (xff: string) => (await call(s.base, "GET", "/usage", key, undefined, { "x-forwarded-for": xff })).status;
    expect([await status("1.1.1.1"), await status("2.2.2.2"), await status("9.9.9.9, 1.1.1.1")]).toEqual([200, 200, 429]);
    await stop(s);
  }, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine
});

describe("usage durability", () => {
  test("usage counts survive kill -9 of the server", async () => {
    const dir = freshDir();
    const s = await start(dir);
    const key = KEY.exec(s.banner)![1];
    expect(
      (
        await call(
          s.base,
          "POST",
          "/logs/bulk",
          key,
          Array.from({ length: 40 }, () => entry()),
        )
      ).status,
    ).toBe(201);
    expect((await call(s.base, "POST", "/logs", key, entry())).status).toBe(201);
    expect((await call(s.base, "POST", "/logs/validate", key, entry())).status).toBe(200);
    s.proc.kill(9);
    expect(await s.exited).not.toBe(0);

    const again = await start(dir);
    expect((await (await call(again.base, "GET", "/usage", key)).json()).used).toBe(41);
    expect((await call(again.base, "POST", "/logs", key, entry())).status).toBe(201);
    expect((await (await call(again.base, "GET", "/usage", key)).json()).used).toBe(42);
    await stop(again);
  }, 180_000); // two starts of a cluster (npm run test:cluster) count in this time
});
