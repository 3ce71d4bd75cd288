// Contract §17, tail over WebSocket: every kept entry from `start` (inclusive), then each new one, once; a reconnect
// with start misses none. A real listening server on 127.0.0.1, Bun's WebSocket client.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

let s: TestSluice;
let base = "";
beforeAll(() => {
  s = startTestSluice(undefined, { ipRatePerMinute: -1, tail: { maxPerKey: 2 } });
  s.app.listen({ hostname: "127.0.0.1", port: 0 });
  base = `ws://127.0.0.1:${s.app.server!.port}`;
});
afterAll(async () => {
  await s.app.stop(true);
  await s.close();
  removeDir(s.dir);
});

const T0 = Date.now() - 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

async function write(key: string, bodies: Record<string, unknown>[]) {
  const r = await s.call("POST", `${WS}/logs/bulk`, { key, body: bodies.map((b) => entry(b)) });
  expect(r.status).toBe(201);
}

/** tail opens a tail and collects [ns, line] values until `n` arrived (or 5 s passed). */
function tail(key: string, params: Record<string, string>) {
  const got: [string, string][] = [];
  const socket = new WebSocket(`${base}/loki/api/v1/tail?${new URLSearchParams(params)}`, { headers: { "x-api-key": key } } as unknown as string[]);
  const opened = new Promise<void>((resolve, reject) => {
    socket.onopen = () => resolve();
    socket.onerror = () => reject(new Error("the tail did not open"));
  });
  socket.onmessage = (m) => {
    for (const st of JSON.parse(String(m.data)).streams) got.push(...st.values);
  };
  const until = async (n: number) => {
    for (let waited = 0; got.length < n && waited < 5000; waited += 20) await Bun.sleep(20);
    return got.map((v) => v[1]);
  };
  const onClose = (f: (code: number) => void) => {
    socket.onclose = (e) => f(e.code);
  };
  return { opened, until, got, onClose, close: () => socket.close() };
}

test("tail: the stored entries from start (inclusive) oldest first, then new ones as they come, each once; filters apply", async () => {
  const key = await (await s.workspace()).key("development", "rw");
  await write(key, [
    { action: "tl", message: "before", clientTimestamp: iso(T0 - 1) },
    { action: "tl", message: "s1", clientTimestamp: iso(T0) },
    { action: "tl", message: "skip me", clientTimestamp: iso(T0 + 5) },
    { action: "tl", message: "s2", clientTimestamp: iso(T0 + 10) },
  ]);
  const t = tail(key, { query: '{action="tl"} != "skip"', start: `${T0}000000` });
  await t.opened;
  expect(await t.until(2)).toEqual(["s1", "s2"]);
  await write(key, [{ action: "tl", message: "live1", clientTimestamp: iso(T0 + 20) }]);
  await write(key, [
    { action: "other", message: "not this", clientTimestamp: iso(T0 + 21) },
    { action: "tl", message: "live2", clientTimestamp: iso(T0 + 22) },
  ]);
  expect(await t.until(4)).toEqual(["s1", "s2", "live1", "live2"]);
  t.close();
  // a reconnect from the last entry's time misses none of what came while it was away
  await write(key, [{ action: "tl", message: "while away", clientTimestamp: iso(T0 + 30) }]);
  const again = tail(key, { query: '{action="tl"}', start: t.got[3][0] });
  await again.opened;
  expect(await again.until(2)).toEqual(["live2", "while away"]);
  again.close();
});

test("tail: without a key the upgrade is refused with 401", async () => {
  const r = await fetch(`${base.replace("ws:", "http:")}/loki/api/v1/tail?query=%7Ba%3D%22b%22%7D`, {
    headers: { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" },
  });
  expect(r.status).toBe(401);
});

test("tail: a revoked key's open tail closes within a few seconds", async () => {
  const ws = await s.workspace();
  const key = await ws.key("development", "ro");
  const t = tail(key, { query: '{action="gone"}' });
  await t.opened;
  const closed = new Promise<number>((resolve) => t.onClose(resolve));
  const keys = (await (await s.admin("GET", `/workspaces/${ws.id}/keys`)).json()) as { id: string }[];
  expect((await s.admin("DELETE", `/keys/${keys[0].id}`)).status).toBe(204);
  const code = await Promise.race([closed, Bun.sleep(4000).then(() => -1)]);
  expect(code).toBe(1008);
});

test("tail: at most SLUICE_TAIL_MAX_PER_KEY open tails per key; the next upgrade is refused with 429", async () => {
  const key = await (await s.workspace()).key("development", "ro");
  const open = [tail(key, { query: '{action="x"}' }), tail(key, { query: '{action="y"}' })];
  for (const t of open) await t.opened;
  const upgrade = {
    connection: "Upgrade",
    upgrade: "websocket",
    "sec-websocket-version": "13",
    "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==",
    "x-api-key": key,
  };
  const third = await fetch(`${base.replace("ws:", "http:")}/loki/api/v1/tail?query=%7Ba%3D%22b%22%7D`, { headers: upgrade });
  expect(third.status).toBe(429);
  expect(((await third.json()) as { errorType: string }).errorType).toBe("too_many_requests");
  open[0].close();
  await Bun.sleep(100);
  const again = tail(key, { query: '{action="z"}' });
  await again.opened;
  again.close();
  open[1].close();
});

test("tail: more than 50,000 stored entries since start closes the tail (1008) rather than leave any out", async () => {
  const key = await (await s.workspace()).key("development", "rw");
  for (let k = 0; k < 6; k++) {
    const start = k * 10_000;
    await write(
      key,
      Array.from({ length: Math.min(10_000, 50_001 - start) }, (_, i) => ({ action: "many", clientTimestamp: iso(T0 + ((start + i) % 1000)) })),
    );
  }
  const t = tail(key, { query: '{action="many"}', start: `${T0}000000` });
  await t.opened;
  const code = await new Promise<number>((resolve) => t.onClose(resolve));
  expect(code).toBe(1008);
  expect(t.got.length).toBe(0);
}, 30_000);
