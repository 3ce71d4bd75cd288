// The server as a process (contract §1, §2 CLI): first start, health, SIGTERM, kill -9, restart, the CLI beside it.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { entry } from "../helpers/sluice.ts";

const dirs: string[] = [];
const running: ServerProcess[] = [];
const freshDir = () => {
  const d = mkdtempSync(join(tmpdir(), "sluice-proc-"));
  dirs.push(d);
  return d;
};
const start = async (dir: string, env?: Record<string, string>) => {
  const s = await spawnServer(dir, env);
  running.push(s);
  return s;
};
afterAll(() => {
  for (const s of running) s.proc.kill(9);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;
const TOKEN = /Admin token \(shown only now\):\s+(\S+)/;
const post = (base: string, path: string, key: string, body: unknown) =>
  fetch(`${base}/api/v1/workspace${path}`, { method: "POST", headers: { "x-api-key": key, "content-type": "application/json" }, body: JSON.stringify(body) });
const get = (base: string, path: string, key: string) => fetch(`${base}/api/v1/workspace${path}`, { headers: { "x-api-key": key } });

describe("first start", () => {
  test("first start on an empty data directory prints the key, the admin token and a curl line; later starts print neither", async () => {
    const dir = freshDir();
    const first = await start(dir);
    const key = KEY.exec(first.banner)?.[1];
    const token = TOKEN.exec(first.banner)?.[1];
    expect(key).toBeDefined();
    expect(token).toBeDefined();
    expect(first.banner).toContain(`curl -X POST ${first.base}/api/v1/workspace/logs -H 'X-API-Key: ${key}'`);

    const info = await (await get(first.base, "/info", key!)).json();
    expect(info.plan.code).toBe("unlimited");
    expect(info.ingestion.default_environment).toBe("development");
    const admin = await fetch(`${first.base}/api/v1/admin/workspaces`, { headers: { authorization: `Bearer ${token}` } });
    expect(admin.status).toBe(200);

    first.proc.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    const second = await start(dir);
    expect(second.banner).not.toMatch(KEY);
    expect(second.banner).not.toMatch(TOKEN);
    expect((await get(second.base, "/info", key!)).status).toBe(200);
    second.proc.kill("SIGTERM");
    expect(await second.exited).toBe(0);
  });

  test("SLUICE_ADMIN_TOKEN is used instead of a generated token, which is then not printed", async () => {
    const s = await start(freshDir(), { SLUICE_ADMIN_TOKEN: "my-own-token" });
    expect(s.banner).not.toMatch(TOKEN);
    expect(s.banner).toMatch(KEY);
    const ok = await fetch(`${s.base}/api/v1/admin/workspaces`, { headers: { authorization: "Bearer my-own-token" } });
    expect(ok.status).toBe(200);
    s.proc.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  });
});

describe("health and signals", () => {
  test("healthz, livez and readyz answer 200 without a key once the server listens", async () => {
    const s = await start(freshDir());
    for (const path of ["/healthz", "/livez", "/readyz"]) {
      const r = await fetch(`${s.base}${path}`);
      expect(r.status).toBe(200);
      expect(await r.json()).toEqual({ status: "ok" });
    }
    s.proc.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  });

  test("SIGTERM finishes in-flight requests, closes storage and exits 0", async () => {
    const dir = freshDir();
    const s = await start(dir);
    const key = KEY.exec(s.banner)![1];
    const batch = Array.from({ length: 5000 }, (_, i) => entry({ action: `drain.${i}` }));
    const inflight = post(s.base, "/logs/bulk", key, batch);
    await Bun.sleep(5); // the request is on its way when the signal arrives
    s.proc.kill("SIGTERM");
    const r = await inflight;
    expect(r.status).toBe(201);
    const { ids } = await r.json();
    expect(await s.exited).toBe(0);

    const again = await start(dir);
    const got = await get(again.base, `/logs/${ids[4999]}`, key);
    expect(got.status).toBe(200);
    again.proc.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });
});

describe("durability", () => {
  test("an entry answered 201 survives kill -9 right after the response", async () => {
    const dir = freshDir();
    const s = await start(dir);
    const key = KEY.exec(s.banner)![1];
    const one = await post(s.base, "/logs", key, entry({ action: "durable.single", metadata: { n: 1 } }));
    expect(one.status).toBe(201);
    const single = await one.json();
    const bulk = await post(
      s.base,
      "/logs/bulk",
      key,
      Array.from({ length: 300 }, (_, i) => entry({ action: `durable.${i}` })),
    );
    expect(bulk.status).toBe(201);
    const { ids } = await bulk.json();
    s.proc.kill(9);
    expect(await s.exited).not.toBe(0);

    const again = await start(dir);
    const back = await get(again.base, `/logs/${single.id}`, key);
    expect(back.status).toBe(200);
    expect(await back.json()).toEqual(single);
    for (const id of [ids[0], ids[150], ids[299]]) expect((await get(again.base, `/logs/${id}`, key)).status).toBe(200);
    const usage = await (await get(again.base, "/usage", key)).json();
    expect(usage.used).toBe(301);
    again.proc.kill("SIGTERM");
    expect(await again.exited).toBe(0);
  });
});

describe("cli", () => {
  test("the CLI manages workspaces and keys on the data directory while the server runs", async () => {
    const dir = freshDir();
    const s = await start(dir);
    const cli = (...args: string[]) => runCli([...args, "--data-dir", dir]);

    const created = await cli("workspaces", "create", "--name", "shop", "--organization", "Acme", "--plan", "free");
    expect(created.code).toBe(0);
    const ws = JSON.parse(created.stdout);
    expect(ws.plan.code).toBe("free");
    expect(ws.organization.name).toBe("Acme");

    const listed = JSON.parse((await cli("workspaces", "list")).stdout);
    expect(listed.map((w: { id: string }) => w.id)).toContain(ws.id);

    const made = await cli("keys", "create", "--workspace", ws.id, "--environment", "staging", "--type", "rw", "--name", "ci");
    expect(made.code).toBe(0);
    const key = JSON.parse(made.stdout);
    expect(key.key).toMatch(/^sl_staging_rw_[A-Za-z0-9]{32,}$/);
    expect((await post(s.base, "/logs", key.key, entry())).status).toBe(201);

    const keys = await cli("keys", "list", "--workspace", ws.id);
    expect(keys.stdout).not.toContain(key.key);
    expect(JSON.parse(keys.stdout)[0].hint).toBe(`${key.key.slice(0, 12)}…${key.key.slice(-4)}`);

    expect((await cli("workspaces", "set-plan", ws.id, "developer")).code).toBe(0);
    expect((await (await get(s.base, "/info", key.key)).json()).plan.code).toBe("developer");

    const rotated = JSON.parse((await cli("keys", "rotate", key.id)).stdout);
    expect((await get(s.base, "/info", key.key)).status).toBe(401);
    expect((await get(s.base, "/info", rotated.key)).status).toBe(200);

    expect((await cli("keys", "revoke", key.id)).code).toBe(0);
    const revoked = await get(s.base, "/info", rotated.key);
    expect(revoked.status).toBe(401);
    expect((await revoked.json()).error_code).toBe("AUTH_INVALID_API_KEY");

    s.proc.kill("SIGTERM");
    expect(await s.exited).toBe(0);
  });

  test("every CLI command has --help, and mistakes exit 2 with the usage line", async () => {
    for (const cmd of [
      ["serve"],
      ["workspaces", "create"],
      ["workspaces", "list"],
      ["workspaces", "set-plan"],
      ["keys", "create"],
      ["keys", "list"],
      ["keys", "rotate"],
      ["keys", "revoke"],
    ]) {
      const r = await runCli([...cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`usage: sluice ${cmd.join(" ")}`);
    }
    const bad = await runCli(["keys", "create", "--workspace", "x", "--data-dir", freshDir()]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("missing --environment, --type");
    const unknown = await runCli(["workspaces", "set-plan", crypto.randomUUID(), "free", "--data-dir", freshDir()]);
    expect(unknown.code).toBe(1);
    expect(JSON.parse(unknown.stderr).error_code).toBe("VALIDATION_INVALID_REQUEST");
  });

  test("the CLI takes its plans from SLUICE_PLANS_FILE, as the server does", async () => {
    const dir = freshDir();
    const plansFile = join(dir, "plans.json");
    const team = {
      code: "team",
      logs_per_month: 1_000,
      log_retention_days: 30,
      requests_per_minute: 60,
      validate_requests_per_minute: 10,
      max_log_size: 1_024,
      max_batch_size: 100,
      max_metadata_depth: 4,
      max_tags: 8,
    };
    writeFileSync(plansFile, JSON.stringify({ plans: [team] }));
    const made = await runCli(["workspaces", "create", "--name", "t", "--plan", "team", "--data-dir", dir], { SLUICE_PLANS_FILE: plansFile });
    expect({ code: made.code, stderr: made.stderr }).toEqual({ code: 0, stderr: "" });
    expect(JSON.parse(made.stdout).plan).toMatchObject({ code: "team", logs_per_month: 1_000 });
    const moved = await runCli(["workspaces", "set-plan", JSON.parse(made.stdout).id, "team", "--data-dir", dir], { SLUICE_PLANS_FILE: plansFile });
    expect(moved.code).toBe(0);
    const without = await runCli(["workspaces", "create", "--name", "u", "--plan", "team", "--data-dir", dir]);
    expect(without.code).toBe(1);
    expect(without.stderr).toContain("team");
  });
});
