// Live tail tests' setup, shared by tail.test.ts and tail-bounds.test.ts: Sluices closed after the file, a tenant, tails over GET /logs/tail.
import { afterAll, expect } from "bun:test";
import { SseReader } from "./sse.ts";
import { WS, entry, removeDir, startTestSluice, type TestOptions, type TestSluice } from "./sluice.ts";

/**
 * tailSluices gives the calling test file a starter of test Sluices without the per-IP rate limit (unless opts set one),
 * and closes and removes every Sluice it started once the file's tests are done (afterAll).
 */
export function tailSluices(): (opts?: TestOptions, dir?: string) => TestSluice {
  const opened: TestSluice[] = [];
  afterAll(async () => {
    for (const s of opened) await s.close().catch(() => {});
    for (const s of opened) removeDir(s.dir);
  });
  return (opts = {}, dir) => {
    const s = startTestSluice(dir, { ipRatePerMinute: -1, ...opts });
    opened.push(s);
    return s;
  };
}

/** tenant makes a workspace on the unlimited plan and a development read-write key of it. */
export async function tenant(s: TestSluice) {
  const ws = await s.workspace();
  return { ws, key: await ws.key("development", "rw") };
}

/** tail sends GET /logs/tail with the query string `params` and returns the response unread. */
export function tail(s: TestSluice, key: string, params = "", headers: Record<string, string> = {}): Promise<Response> {
  return s.call("GET", `${WS}/logs/tail${params ? `?${params}` : ""}`, { key, headers });
}

/** open opens a tail, expects 200 text/event-stream, and reads its events. */
export async function open(s: TestSluice, key: string, params = "", headers: Record<string, string> = {}) {
  const r = await tail(s, key, params, headers);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toBe("text/event-stream");
  return new SseReader(r.body!);
}

/** bulk writes entries (overrides of entry()) in one POST /logs/bulk, expects 201, and returns their ids. */
export async function bulk(s: TestSluice, key: string, bodies: Record<string, unknown>[]) {
  const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: bodies.map((b) => entry(b)) });
  expect(r.status).toBe(201);
  return ((await r.json()) as { ids: string[] }).ids;
}
