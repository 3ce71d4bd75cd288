// The single binary (contract §1): `bun run build` makes an executable that serves and runs every CLI command
// from a directory far from the repo and its node_modules, with lmdb's native addon embedded, and the libraries
// read at run time (LogQL's grammar, RE2, nodemailer) bundled.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compressSync } from "snappy";
import { ExportLogsServiceRequest, PushRequest } from "../../src/ingest/protocols/schemas.ts";
import { launchBrowser, role, signIn } from "../helpers/browser.ts";
import { smtpReceiver } from "../helpers/receivers.ts";

const ROOT = join(import.meta.dir, "..", "..");
const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;
const WS = "/api/v1/workspace";

let work: string;
let binary: string;
let bare: string;
let runDir: string;
beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "sluice-binary-"));
  runDir = mkdtempSync(join(tmpdir(), "sluice-binary-run-"));
  binary = join(work, "sluice");
  bare = join(work, "sluice-bare");
  // The second build pretends msgpackr-extract has no addon for this machine (the loader's own override).
  await Promise.all([build(binary), build(bare, { MSGPACKR_EXTRACT_PREBUILD: join(work, "none") })]);
}, 60_000);
afterAll(() => {
  for (const d of [work, runDir]) rmSync(d, { recursive: true, force: true });
});

/** build runs the build script the way `bun run build` does, into outfile. */
async function build(outfile: string, env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, "scripts/build.ts", "--outfile", outfile], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`build failed (${code}): ${out}${err}`);
}

/** isolated is the whole environment of a binary run: no NODE_PATH, no bun, its own temp dir for the extracted addon. */
const isolated = (extra: Record<string, string> = {}) => ({ PATH: "/usr/bin:/bin", HOME: runDir, TMPDIR: runDir, ...extra });

/** sluice runs the executable with args from runDir and returns its exit code and output. */
async function sluice(exe: string, args: string[]) {
  const proc = Bun.spawn([exe, ...args], { cwd: runDir, env: isolated(), stdout: "pipe", stderr: "pipe" });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}

/** json runs a CLI command that must succeed and parses what it prints. */
async function json(exe: string, args: string[]) {
  const r = await sluice(exe, args);
  if (r.code !== 0) throw new Error(`sluice ${args.join(" ")} exited ${r.code}: ${r.stdout}${r.stderr}`);
  return r.stdout.trim() === "" ? undefined : JSON.parse(r.stdout);
}

/** serve starts `sluice serve` on 127.0.0.1 and a random port and resolves with its address and banner. */
async function serve(exe: string, dataDir: string) {
  const proc = Bun.spawn([exe, "serve", "--host", "127.0.0.1"], {
    cwd: runDir,
    env: isolated({ SLUICE_DATA_DIR: dataDir, SLUICE_PORT: "0" }),
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!(/listening on (http:\/\/\S+)/.test(out) && KEY.test(out))) {
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${out}${await new Response(proc.stderr).text()}`);
    out += decoder.decode(value);
  }
  reader.releaseLock();
  return { proc, base: /listening on (http:\/\/\S+)/.exec(out)![1], key: KEY.exec(out)![1] };
}

describe("the compiled binary", () => {
  test("--help lists the commands and exits 0", async () => {
    const r = await sluice(binary, ["--help"]);
    expect(r.code).toBe(0);
    for (const c of ["serve", "workspaces create", "workspaces set-plan", "keys create", "keys revoke"]) expect(r.stdout).toContain(c);
    const sub = await sluice(binary, ["keys", "create", "--help"]);
    expect(sub.code).toBe(0);
    expect(sub.stdout).toContain("--environment");
  });

  test("serve answers health, stores a log, reads it back and finds it by full text; every CLI command works beside it; SIGTERM exits 0", async () => {
    const dataDir = join(runDir, "data");
    const s = await serve(binary, dataDir);
    try {
      const health = await fetch(`${s.base}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: "ok" });

      const headers = { "x-api-key": s.key, "content-type": "application/json" };
      const body = { action: "binary.smoke", level: "info", message: "from the compiled binary", clientTimestamp: "2026-11-22T10:00:00.000Z" };
      const written = await fetch(`${s.base}${WS}/logs`, { method: "POST", headers, body: JSON.stringify(body) });
      expect(written.status).toBe(201);
      const { id } = (await written.json()) as { id: string };
      const read = await fetch(`${s.base}${WS}/logs/${id}`, { headers });
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ id, action: "binary.smoke", message: "from the compiled binary" });
      // full text runs in a worker thread: the binary must carry its code too
      const found = await fetch(`${s.base}${WS}/logs/query`, { method: "POST", headers, body: JSON.stringify({ query: "compiled binary" }) });
      expect(found.status).toBe(200);
      expect(((await found.json()) as { id: string }[]).map((e) => e.id)).toEqual([id]);
      // a large bulk body is checked and encoded by the ingest worker: the binary must carry it too
      const bulk = Array.from({ length: 400 }, (_, i) => ({ ...body, message: `bulk entry ${i} ${"x".repeat(200)}` }));
      const stored = await fetch(`${s.base}${WS}/logs/bulk`, { method: "POST", headers, body: JSON.stringify(bulk) });
      expect(stored.status).toBe(201);
      const { ids } = (await stored.json()) as { ids: string[] };
      const last = await fetch(`${s.base}${WS}/logs/${ids[399]}`, { headers });
      expect(((await last.json()) as { message: string }).message).toStartWith("bulk entry 399 ");

      const dd = ["--data-dir", dataDir];
      const [first] = await json(binary, ["workspaces", "list", ...dd]);
      expect(first.name).toBe("default");
      const made = await json(binary, ["workspaces", "create", "--name", "checkout", "--plan", "free", ...dd]);
      expect(made.plan.code).toBe("free");
      expect((await json(binary, ["workspaces", "set-plan", made.id, "professional", ...dd])).plan.code).toBe("professional");

      const key = await json(binary, ["keys", "create", "--workspace", first.id, "--environment", "production", "--type", "ro", "--name", "ci", ...dd]);
      expect(key.key).toMatch(/^sl_production_ro_[A-Za-z0-9]{32,}$/);
      expect((await fetch(`${s.base}${WS}/info`, { headers: { "x-api-key": key.key } })).status).toBe(200);
      expect((await json(binary, ["keys", "list", "--workspace", first.id, ...dd])).map((k: { id: string }) => k.id)).toContain(key.id);
      const rotated = await json(binary, ["keys", "rotate", key.id, ...dd]);
      expect(rotated.id).toBe(key.id);
      expect(await json(binary, ["keys", "revoke", key.id, ...dd])).toBeUndefined();
      expect((await fetch(`${s.base}${WS}/info`, { headers: { "x-api-key": rotated.key } })).status).toBe(401);
    } finally {
      s.proc.kill("SIGTERM");
    }
    expect(await s.proc.exited).toBe(0);
  });

  test("the shipper decoders run in the binary: OTLP protobuf (its schemas embedded; a large body on the ingest worker), Loki snappy protobuf, and syslog over UDP", async () => {
    const dataDir = join(runDir, "shippers-data");
    const dd = ["--data-dir", dataDir];
    const ws = await json(binary, ["workspaces", "create", "--name", "shippers", ...dd]);
    const { key } = await json(binary, ["keys", "create", "--workspace", ws.id, "--environment", "development", "--type", "rw", ...dd]);
    const proc = Bun.spawn([binary, "serve", "--host", "127.0.0.1"], {
      cwd: runDir,
      env: isolated({ SLUICE_DATA_DIR: dataDir, SLUICE_PORT: "0", SLUICE_SYSLOG_UDP: "127.0.0.1:0", SLUICE_SYSLOG_KEY: key }),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      const reader = proc.stdout.getReader();
      let out = "";
      const deadline = Date.now() + 15_000;
      while (!/Syslog listening on udp 127\.0\.0\.1:(\d+)/.test(out)) {
        if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
        const { done, value } = await reader.read();
        if (done) throw new Error(`server exited: ${out}${await new Response(proc.stderr).text()}`);
        out += new TextDecoder().decode(value);
      }
      reader.releaseLock();
      const base = /listening on (http:\/\/\S+)/.exec(out)![1];
      const udpPort = Number(/Syslog listening on udp 127\.0\.0\.1:(\d+)/.exec(out)![1]);
      const records = Array.from({ length: 600 }, (_, i) => ({ body: { stringValue: `otlp ${i} ${"x".repeat(100)}` }, severityNumber: 13 }));
      const otlp = ExportLogsServiceRequest.encode(
        ExportLogsServiceRequest.fromObject({ resourceLogs: [{ scopeLogs: [{ scope: { name: "bin" }, logRecords: records }] }] }),
      ).finish();
      expect(otlp.byteLength).toBeGreaterThan(64 * 1024);
      const o = await fetch(`${base}/otlp/v1/logs`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/x-protobuf" },
        body: otlp,
      });
      expect(o.status).toBe(200);
      const loki = compressSync(
        Buffer.from(
          PushRequest.encode(
            PushRequest.fromObject({ streams: [{ labels: '{app="bin"}', entries: [{ timestamp: { seconds: 1795341600 }, line: "loki line" }] }] }),
          ).finish(),
        ),
      );
      const l = await fetch(`${base}/loki/api/v1/push`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/x-protobuf" },
        body: loki,
      });
      expect(l.status).toBe(204);
      const udp = await Bun.udpSocket({});
      udp.send("<12>1 2026-11-22T10:00:00Z h daemon - - - over udp", udpPort, "127.0.0.1");
      udp.close();
      let count = 0;
      for (let tries = 0; tries < 100 && count !== 602; tries++) {
        count = ((await (await fetch(`${base}${WS}/usage`, { headers: { "x-api-key": key } })).json()) as { used: number }).used;
        if (count !== 602) await Bun.sleep(50);
      }
      expect(count).toBe(602);
    } finally {
      proc.kill("SIGTERM");
    }
    expect(await proc.exited).toBe(0);
  });

  test("the web explorer is embedded: GET / redirects to /ui, its page and files come with the CSP, and a browser signs in and reads", async () => {
    const s = await serve(binary, join(runDir, "ui-data"));
    try {
      const root = await fetch(`${s.base}/`, { redirect: "manual" });
      expect(root.status).toBe(302);
      expect(root.headers.get("location")).toBe("/ui");
      const page = await fetch(`${s.base}/ui`);
      expect(page.status).toBe(200);
      expect(page.headers.get("content-security-policy")).toContain("script-src 'self'");
      const html = await page.text();
      const files = [...html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)].map((m) => m[1]);
      expect(files.length).toBe(2);
      for (const f of files) expect((await fetch(`${s.base}${f}`)).status).toBe(200);
      const headers = { "x-api-key": s.key, "content-type": "application/json" };
      const body = { action: "binary.ui", level: "warn", message: "seen in the explorer", clientTimestamp: "2026-11-22T10:00:00.000Z" };
      expect((await fetch(`${s.base}${WS}/logs`, { method: "POST", headers, body: JSON.stringify(body) })).status).toBe(201);
      const browser = await launchBrowser();
      try {
        const tab = await browser.newPage();
        await signIn(tab, s.base, s.key);
        const list = await role(tab, "listbox", "Log entries");
        await tab.waitForFunction((el) => (el as unknown as { textContent: string }).textContent.includes("seen in the explorer"), {}, list);
      } finally {
        await browser.close();
      }
    } finally {
      s.proc.kill("SIGTERM");
    }
    expect(await s.proc.exited).toBe(0);
  }, 60_000); // the first launch on a machine unpacks Chromium (@sparticuz/chromium): several seconds

  test("LogQL (Grafana's grammar, RE2 regexes) answers in the binary, and an email channel's test notice leaves through nodemailer", async () => {
    const dataDir = join(runDir, "loki-data");
    const s = await serve(binary, dataDir);
    const smtp = await smtpReceiver();
    try {
      const [ws] = await json(binary, ["workspaces", "list", "--data-dir", dataDir]);
      const all = await json(binary, [
        "keys",
        "create",
        "--workspace",
        ws.id,
        "--environment",
        "development",
        "--type",
        "rw",
        "--scopes",
        "*",
        "--data-dir",
        dataDir,
      ]);
      const headers = { "x-api-key": all.key, "content-type": "application/json" };
      const at = Date.parse("2026-11-22T10:00:00.000Z");
      const bodies = ["card declined 4242", "card refused 17", "card declined soon", "all fine 3"].map((message, i) => ({
        action: "checkout.pay",
        level: i < 3 ? "error" : "info",
        message,
        clientTimestamp: new Date(at + i * 1000).toISOString(),
      }));
      expect((await fetch(`${s.base}${WS}/logs/bulk`, { method: "POST", headers, body: JSON.stringify(bodies) })).status).toBe(201);
      const loki = async (params: Record<string, string>) => {
        const r = await fetch(`${s.base}/loki/api/v1/query_range?${new URLSearchParams(params)}`, { headers });
        if (r.status !== 200) throw new Error(`query_range ${params.query} answered ${r.status}: ${await r.text()}`);
        return ((await r.json()) as { data: { result: { metric?: Record<string, string>; values: [string, string][] }[] } }).data.result;
      };
      const span = { start: `${at - 60_000}000000`, end: `${at + 60_000}000000` };
      const lines = await loki({ query: '{action="checkout.pay"} |~ `card (declined|refused) \\d+`', limit: "10", direction: "forward", ...span });
      expect(lines.flatMap((r) => r.values.map(([, line]) => line))).toEqual(["card declined 4242", "card refused 17"]);
      const volume = await loki({ query: 'sum by (level) (count_over_time({action="checkout.pay"}[5m]))', step: "60s", ...span });
      expect(Object.fromEntries(volume.map((r) => [r.metric?.level, Math.max(...r.values.map(([, v]) => Number(v)))]))).toEqual({ error: 3, info: 1 });

      const channel = {
        name: "mail",
        type: "email",
        config: { to: ["ops@example.com"], from: "sluice@example.com", smtp: { host: "127.0.0.1", port: smtp.port } },
      };
      const made = await fetch(`${s.base}${WS}/alerts/channels`, { method: "POST", headers, body: JSON.stringify(channel) });
      expect(made.status).toBe(201);
      const { id } = (await made.json()) as { id: string };
      const tested = await sluice(binary, ["alerts", "test-channel", id, "--url", s.base, "--key", all.key]);
      expect(tested.code).toBe(0);
      expect(smtp.got.map((m) => m.to)).toEqual([["ops@example.com"]]);
    } finally {
      s.proc.kill("SIGTERM");
      await smtp.stop();
    }
    expect(await s.proc.exited).toBe(0);
  });

  test("without msgpackr's optional native extension the binary still writes and reads", async () => {
    const dd = ["--data-dir", join(runDir, "bare-data")];
    const made = await json(bare, ["workspaces", "create", "--name", "plain", "--organization", "Ünïcode Org", ...dd]);
    const [listed] = await json(bare, ["workspaces", "list", ...dd]);
    expect(listed).toEqual(made);
  });
});
