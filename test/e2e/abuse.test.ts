// Abuse guards: body size enforced while streaming, JSON nesting checked without recursion, slow clients cut off.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer, type ServerProcess } from "../helpers/process.ts";
import { entry, removeDir, startTestSluice, WS } from "../helpers/sluice.ts";

const s = startTestSluice(undefined, { bodyTimeoutMs: 1_500 });
const dirs: string[] = [];
const servers: ServerProcess[] = [];
afterAll(async () => {
  for (const p of servers) p.proc.kill(9);
  await s.close();
  removeDir(s.dir);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const post = (path: string, key: string, body: RequestInit["body"], headers: Record<string, string> = {}) =>
  s.app.handle(
    new Request(`http://localhost${WS}${path}`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json", ...headers },
      body,
      duplex: "half",
    } as RequestInit),
  );

describe("nesting", () => {
  test("a 10 MB body of nested brackets is rejected with 400 in under 100 ms", async () => {
    const key = await (await s.workspace()).key("development", "rw");
    const bomb = "[".repeat(10 * 1024 * 1024);
    for (const path of ["/logs/bulk", "/logs", "/logs/validate"]) {
      const started = performance.now();
      const r = await post(path, key, bomb);
      const ms = performance.now() - started;
      expect(r.status).toBe(400);
      expect((await r.json()).error_code).toBe("VALIDATION_FAILED");
      expect(ms).toBeLessThan(100);
    }
  });

  test("brackets inside strings do not count as nesting", async () => {
    const key = await (await s.workspace()).key("development", "rw");
    const r = await post("/logs", key, JSON.stringify(entry({ message: `${"[{".repeat(500)} \\" ${"[".repeat(200)}` })));
    expect(r.status).toBe(201);
  });

  test("an entry nested a little deeper than the plan allows gets its own error, not the abuse guard's", async () => {
    const key = await (await s.workspace("free")).key("development", "rw"); // free: depth 3
    const r = await post("/logs/validate", key, JSON.stringify([entry({ metadata: { a: { b: { c: { d: 1 } } } } })]));
    expect(r.status).toBe(200);
    const body = await r.json();
    expect(body.errors).toEqual([expect.objectContaining({ field: "metadata", log_index: 0 })]);
  });
});

describe("slow clients", () => {
  test("a body that trickles in is cut off after the body timeout with 400, and nothing is stored", async () => {
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    let n = 0;
    const trickle = new ReadableStream<Uint8Array>({
      async pull(c) {
        await Bun.sleep(200);
        if (n++ > 50) c.close();
        else c.enqueue(new TextEncoder().encode(n === 1 ? '[{"action":"x","level":"info","clientTimestamp":"2026-01-01T00:00:00Z","message":"' : "a"));
      },
    });
    const started = performance.now();
    const r = await post("/logs/bulk", key, trickle);
    expect(r.status).toBe(400);
    expect((await r.json()).message).toContain("did not arrive within");
    expect(performance.now() - started).toBeLessThan(3_000);
    expect((await (await s.call("GET", `${WS}/usage`, { key })).json()).used).toBe(0);
  });

  test("a small body of declared length that trickles in is cut off after the body timeout with 400, and nothing is stored", async () => {
    const ws = await s.workspace();
    const key = await ws.key("development", "rw");
    const text = JSON.stringify(entry({ message: "a".repeat(40) }));
    let n = 0;
    const trickle = new ReadableStream<Uint8Array>({
      async pull(c) {
        await Bun.sleep(200);
        if (n >= text.length) c.close();
        else c.enqueue(new TextEncoder().encode(text[n++]));
      },
    });
    const started = performance.now();
    const r = await post("/logs", key, trickle, { "content-length": String(text.length) });
    const took = performance.now() - started;
    expect(r.status).toBe(400);
    expect((await r.json()).message).toContain("did not arrive within 2 s");
    expect(took).toBeGreaterThanOrEqual(1_500);
    expect(took).toBeLessThan(2_500);
    expect((await (await s.call("GET", `${WS}/usage`, { key })).json()).used).toBe(0);
  });

  test("a client that sends one byte a second does not hold the server: others are served at once and it is disconnected", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-slow-"));
    dirs.push(dir);
    const server = await spawnServer(dir, { SLUICE_ACCESS_LOG: "off" });
    servers.push(server);
    const { port } = new URL(server.base);
    const started = Date.now();
    let closedAfter = 0;
    const sock = connect(Number(port), "127.0.0.1");
    sock.on("error", () => {});
    sock.on("close", () => (closedAfter = Date.now() - started));
    const head = `POST ${WS}/logs HTTP/1.1\r\nHost: x\r\nX-Padding: ${"a".repeat(200)}`;
    let sent = 0;
    const timer = setInterval(() => {
      if (!closedAfter && sent < head.length) sock.write(head[sent++]);
    }, 1000);
    try {
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
        expect(performance.now() - t).toBeLessThan(500);
        await Bun.sleep(1000);
      }
      for (let i = 0; i < 25 && !closedAfter; i++) await Bun.sleep(1000);
      expect(closedAfter).toBeGreaterThan(0); // the server hung up on it
      expect(closedAfter).toBeLessThan(25_000);
      expect(sent).toBeLessThan(head.length); // before it ever finished its headers
    } finally {
      clearInterval(timer);
      sock.destroy();
    }
  }, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine
});
