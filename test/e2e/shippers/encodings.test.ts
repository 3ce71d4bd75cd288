// Contract §11, the parts every write route shares: gzip and deflate bodies, NDJSON on /logs/bulk, Bearer and Basic keys.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { deflateRawSync, deflateSync, gzipSync } from "node:zlib";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../../helpers/sluice.ts";

let s: TestSluice;
beforeAll(() => {
  s = startTestSluice();
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const fresh = async (plan = "unlimited") => (await s.workspace(plan)).key("development", "rw");

function send(path: string, headers: Record<string, string>, body: string | Uint8Array) {
  return s.app.handle(new Request(`http://localhost${path}`, { method: "POST", headers, body }));
}

async function stored(key: string): Promise<Record<string, unknown>[]> {
  const r = await s.call("GET", `${WS}/logs?pageSize=100`, { key });
  expect(r.status).toBe(200);
  return (await r.json()) as Record<string, unknown>[];
}

test("a gzip body is accepted on POST /logs/bulk and POST /logs", async () => {
  const key = await fresh();
  const bulk = await send(
    `${WS}/logs/bulk`,
    { "x-api-key": key, "content-type": "application/json", "content-encoding": "gzip" },
    gzipSync(JSON.stringify([entry({ action: "gz.bulk" })])),
  );
  expect(bulk.status).toBe(201);
  const one = await send(
    `${WS}/logs`,
    { "x-api-key": key, "content-type": "application/json", "content-encoding": "gzip" },
    gzipSync(JSON.stringify(entry({ action: "gz.one" }))),
  );
  expect(one.status).toBe(201);
  expect((await stored(key)).map((e) => e.action).sort()).toEqual(["gz.bulk", "gz.one"]);
});

test("a deflate body is accepted, zlib-wrapped or raw", async () => {
  const key = await fresh();
  for (const [action, deflate] of [
    ["zlib", deflateSync],
    ["raw", deflateRawSync],
  ] as const) {
    const r = await send(
      `${WS}/logs/bulk`,
      { "x-api-key": key, "content-type": "application/json", "content-encoding": "deflate" },
      deflate(JSON.stringify([entry({ action })])),
    );
    expect(r.status).toBe(201);
  }
  expect((await stored(key)).map((e) => e.action).sort()).toEqual(["raw", "zlib"]);
});

test("the size limit applies to the decoded bytes: a small gzip bomb is refused fast and stores nothing", async () => {
  const key = await fresh("free");
  const inside = `[${JSON.stringify(entry())},${" ".repeat(64 * 1024 * 1024)}]`;
  const bomb = gzipSync(inside);
  expect(bomb.byteLength).toBeLessThan(100 * 1024);
  const started = performance.now();
  const r = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/json", "content-encoding": "gzip" }, bomb);
  expect(performance.now() - started).toBeLessThan(1000);
  expect(r.status).toBe(400);
  expect(((await r.json()) as { error_code: string }).error_code).toBe("VALIDATION_FAILED");
  expect(await stored(key)).toEqual([]);
});

test("a body that is not what its Content-Encoding says answers 400 and stores nothing", async () => {
  const key = await fresh();
  const r = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/json", "content-encoding": "gzip" }, JSON.stringify([entry()]));
  expect(r.status).toBe(400);
  const br = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/json", "content-encoding": "br" }, JSON.stringify([entry()]));
  expect(br.status).toBe(400);
  expect(await stored(key)).toEqual([]);
});

test("POST /logs/bulk takes NDJSON, blank lines skipped, log_index counting the entries", async () => {
  const key = await fresh();
  const body = `${JSON.stringify(entry({ action: "nd.1" }))}\n\n${JSON.stringify(entry({ action: "nd.2" }))}\n`;
  const r = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/x-ndjson" }, body);
  expect(r.status).toBe(201);
  expect(((await r.json()) as { count: number }).count).toBe(2);
  const bad = `${JSON.stringify(entry({ action: "nd.3" }))}\n\n${JSON.stringify(entry({ level: "loud" }))}\n`;
  const refused = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/x-ndjson" }, bad);
  expect(refused.status).toBe(400);
  const errors = ((await refused.json()) as { details: { errors: { field: string; log_index: number }[] } }).details.errors;
  expect(errors).toEqual([expect.objectContaining({ field: "level", log_index: 1 })]);
  expect((await stored(key)).map((e) => e.action).sort()).toEqual(["nd.1", "nd.2"]);
});

test("an NDJSON line holding two values is refused whole, never split into entries", async () => {
  const key = await fresh();
  const body = `${JSON.stringify(entry())},${JSON.stringify(entry())}\n`;
  const r = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/x-ndjson" }, body);
  expect(r.status).toBe(400);
  expect(((await r.json()) as { error_code: string }).error_code).toBe("VALIDATION_INVALID_JSON");
  expect(await stored(key)).toEqual([]);
});

test("NDJSON gzip-compressed is accepted", async () => {
  const key = await fresh();
  const body = gzipSync(`${JSON.stringify(entry({ action: "ndgz" }))}\n`);
  const r = await send(`${WS}/logs/bulk`, { "x-api-key": key, "content-type": "application/x-ndjson", "content-encoding": "gzip" }, body);
  expect(r.status).toBe(201);
});

test("Authorization: Bearer <key> and Basic with the key as password work on the section 3 routes", async () => {
  const key = await fresh();
  const bearer = await send(`${WS}/logs`, { authorization: `Bearer ${key}`, "content-type": "application/json" }, JSON.stringify(entry({ action: "bearer" })));
  expect(bearer.status).toBe(201);
  const basic = `Basic ${Buffer.from(`anyone:${key}`).toString("base64")}`;
  const read = await s.app.handle(new Request(`http://localhost${WS}/logs`, { headers: { authorization: basic } }));
  expect(read.status).toBe(200);
  expect(((await read.json()) as { action: string }[]).map((e) => e.action)).toEqual(["bearer"]);
});

test("a wrong Bearer or Basic key answers 401 AUTH_INVALID_API_KEY", async () => {
  for (const authorization of ["Bearer sl_development_rw_nope", `Basic ${Buffer.from("user:sl_x").toString("base64")}`, "Basic !!!"]) {
    const r = await s.app.handle(new Request(`http://localhost${WS}/logs`, { headers: { authorization } }));
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error_code: string }).error_code).toBe("AUTH_INVALID_API_KEY");
  }
});
