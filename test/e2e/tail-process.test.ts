// Live tails on the real server process: a tail outlives the idle timeout, a clean stop ends open tails, and
// `sluice tail` prints entries as they arrive and reconnects across a server restart without gaps or repeats.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { diesWithTest, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { removeDir } from "../helpers/sluice.ts";
import { SseReader } from "../helpers/sse.ts";

const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;
const ROOT = join(import.meta.dir, "..", "..");
const dirs: string[] = [];
const procs: ServerProcess[] = [];
/** the `sluice tail` CLI processes: a failed assertion leaves one running, so afterAll kills them too */
const clis: Subprocess[] = [];
afterAll(() => {
  for (const p of procs) p.proc.kill(9);
  for (const c of clis) c.kill(9);
  for (const d of dirs) removeDir(d);
});
async function server(dir: string, env: Record<string, string> = {}) {
  const p = await spawnServer(dir, { SLUICE_ACCESS_LOG: "off", ...env });
  procs.push(p);
  return p;
}
const post = (base: string, key: string, body: unknown) =>
  fetch(`${base}/api/v1/workspace/logs`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify({ action: "a", level: "info", clientTimestamp: "2026-11-22T10:00:00Z", ...(body as object) }),
  });

test("a tail outlives the idle timeout, and SIGTERM with tails open still stops cleanly", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-tailp-"));
  dirs.push(dir);
  const s = await server(dir, { SLUICE_IDLE_TIMEOUT_SECONDS: "1", SLUICE_TAIL_HEARTBEAT_SECONDS: "60" });
  const key = KEY.exec(s.banner)![1];
  const r = await fetch(`${s.base}/api/v1/workspace/logs/tail`, { headers: { "x-api-key": key } });
  expect(r.status).toBe(200);
  const sse = new SseReader(r.body!);
  await Bun.sleep(2500); // silent for longer than the idle timeout
  expect((await post(s.base, key, { message: "late" })).status).toBe(201);
  const ev = await sse.next(3000);
  expect(JSON.parse(ev!.data).message).toBe("late");
  s.proc.kill("SIGTERM");
  const code = await Promise.race([s.exited, Bun.sleep(5000).then(() => "hung")]);
  expect(code).toBe(0);
  expect(await sse.next(1000)).toBeUndefined();
}, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine

test("sluice tail prints entries as NDJSON as they arrive and reconnects across a restart without gaps or repeats", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-tailp-"));
  dirs.push(dir);
  let s = await server(dir);
  const key = KEY.exec(s.banner)![1];
  const port = new URL(s.base).port;
  const cli = Bun.spawn(diesWithTest([process.execPath, "src/cli/main.ts", "tail", "--query", "level=error", "--url", s.base, "--key", key]), {
    cwd: ROOT,
    stdout: "pipe",
    stderr: "pipe",
  });
  clis.push(cli);
  const lines: string[] = [];
  void (async () => {
    const decoder = new TextDecoder();
    let buf = "";
    for await (const chunk of cli.stdout) {
      buf += decoder.decode(chunk);
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    }
  })();
  const until = async (n: number) => {
    for (let i = 0; i < 200 && lines.length < n; i++) await Bun.sleep(50);
  };
  // the CLI is connected once a probe it prints arrives; every probe after the first printed one is printed too (no gaps)
  let probes = 0;
  for (let i = 0; i < 300 && lines.length === 0; i++) {
    expect((await post(s.base, key, { level: "error", message: `probe ${++probes}` })).status).toBe(201);
    await Bun.sleep(100);
  }
  await until(1);
  const lastProbe = `probe ${probes}`;
  for (let i = 0; i < 200 && !lines.some((l) => JSON.parse(l).message === lastProbe); i++) await Bun.sleep(50);
  lines.splice(0, lines.findIndex((l) => JSON.parse(l).message === lastProbe) + 1);
  for (const m of ["e1", "e2"]) expect((await post(s.base, key, { level: "error", message: m })).status).toBe(201);
  expect((await post(s.base, key, { level: "info", message: "no" })).status).toBe(201);
  await until(2);
  s.proc.kill(9); // a crash: the CLI loses its connection
  await s.exited;
  s = await server(dir, { SLUICE_PORT: port });
  for (const m of ["e3", "e4"]) expect((await post(s.base, key, { level: "error", message: m })).status).toBe(201); // perhaps before the CLI is back
  await until(4);
  expect(lines.map((l) => JSON.parse(l).message)).toEqual(["e1", "e2", "e3", "e4"]);
  cli.kill("SIGINT");
  expect(await cli.exited).toBe(0);
  s.proc.kill("SIGTERM");
  await s.exited;
}, 180_000); // two starts of a cluster (npm run test:cluster) count in this time
