// Contract §4 (writing) over HTTP: POST /logs, POST /logs/bulk, POST /logs/validate, and what /usage counts.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const UTC_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const FREE_MAX_BATCH = 50;
const FREE_BODY_LIMIT = 50 * 700 + 64 * 1024; // max_batch_size × max_log_size + 64 KiB
const LOG_ENTRY_FIELDS = [
  "action",
  "actor",
  "client_timestamp",
  "context",
  "environment",
  "id",
  "level",
  "message",
  "metadata",
  "server_timestamp",
  "tags",
  "target",
];
const encoder = new TextEncoder();

let s: TestSluice;
beforeAll(() => {
  s = startTestSluice();
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

/** fresh makes a new workspace and returns its development rw key, so tests never see each other's entries. */
const fresh = async (plan = "unlimited") => (await s.workspace(plan)).key("development", "rw");
const post = (path: string, key: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });
const get = (path: string, key: string) => s.call("GET", `${WS}${path}`, { key });

/** send posts a body exactly as given (bytes, text or stream) with the given Content-Type, or none. */
function send(path: string, key: string, body: string | Uint8Array | ReadableStream<Uint8Array>, contentType?: string, extra: Record<string, string> = {}) {
  const headers: Record<string, string> = { "x-api-key": key, ...extra };
  if (contentType !== undefined) headers["content-type"] = contentType;
  const init = { method: "POST", headers, body, duplex: "half" } as RequestInit;
  return s.app.handle(new Request(`http://localhost${WS}${path}`, init));
}

/** streamOf serves bytes in 8 KiB chunks through a ReadableStream, so no Content-Length is known. */
function streamOf(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let at = 0;
  return new ReadableStream({
    pull(c) {
      if (at >= bytes.length) return c.close();
      c.enqueue(bytes.slice(at, at + 8192));
      at += 8192;
    },
  });
}

/** padded is the JSON of value followed by spaces up to exactly `size` bytes: still a valid body. */
function padded(value: unknown, size: number): Uint8Array {
  const text = JSON.stringify(value);
  return encoder.encode(text + " ".repeat(size - encoder.encode(text).length));
}

async function expectError(res: Response, status: number, code: string) {
  const body = await res.json();
  expect({ status: res.status, code: body.error_code }).toEqual({ status, code });
  return body;
}

const listAll = async (key: string) => (await get("/logs?pageSize=100", key)).json();
const usedOf = async (key: string) => (await (await get("/usage", key)).json()).used as number;
const pairs = (errors: { field: string; log_index: number | null }[]) => errors.map((e) => `${e.log_index}:${e.field}`).sort();

describe("POST /logs", () => {
  test("answers 201 with the stored entry: 12 fields, UUIDv7 id, UTC millisecond timestamps, deduplicated tags", async () => {
    const key = await fresh();
    const sent = {
      action: "user.login",
      level: "warn",
      clientTimestamp: "2026-11-22T12:00:00.5+02:00",
      environment: "development",
      message: "hello",
      tags: ["b", "a", "b", "c", "a"],
      actor: { id: "u1" },
      target: { doc: 7 },
      context: { ip: "10.0.0.1" },
      metadata: { deep: { er: [1, 2] } },
    };
    const before = Date.now();
    const res = await post("/logs", key, sent);
    const after = Date.now();
    expect(res.status).toBe(201);
    const got = await res.json();
    expect(Object.keys(got).sort()).toEqual(LOG_ENTRY_FIELDS);
    expect(got.id).toMatch(UUID_V7);
    expect(got.server_timestamp).toMatch(UTC_MS);
    const server = Date.parse(got.server_timestamp);
    expect(server).toBeGreaterThanOrEqual(before);
    expect(server).toBeLessThanOrEqual(after);
    expect(got).toEqual({
      id: got.id,
      environment: "development",
      level: "warn",
      action: "user.login",
      message: "hello",
      tags: ["b", "a", "c"],
      actor: { id: "u1" },
      target: { doc: 7 },
      context: { ip: "10.0.0.1" },
      metadata: { deep: { er: [1, 2] } },
      client_timestamp: "2026-11-22T10:00:00.500Z",
      server_timestamp: got.server_timestamp,
    });
  });

  test("absent message and objects are null, absent tags [], environment the key's", async () => {
    const key = await fresh();
    const got = await (await post("/logs", key, entry())).json();
    expect(got).toEqual({
      id: got.id,
      environment: "development",
      level: "info",
      action: "user.login",
      message: null,
      tags: [],
      actor: null,
      target: null,
      context: null,
      metadata: null,
      client_timestamp: "2026-11-22T10:00:00.000Z",
      server_timestamp: got.server_timestamp,
    });
  });

  test("the 201 entry is exactly what GET /logs/{id} returns", async () => {
    const key = await fresh();
    const created = await (await post("/logs", key, entry({ message: "m", tags: ["x"], metadata: { a: 1 } }))).json();
    const res = await get(`/logs/${created.id}`, key);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  test.each([
    ["2026-11-22T10:00:00Z", "2026-11-22T10:00:00.000Z"],
    ["2026-11-22T10:00:00.123Z", "2026-11-22T10:00:00.123Z"],
    ["2026-11-22T05:30:00.1-04:30", "2026-11-22T10:00:00.100Z"],
    ["2026-11-23T00:00:00+14:00", "2026-11-22T10:00:00.000Z"],
    ["2026-11-22T11:00:00.123456789+01:00", "2026-11-22T10:00:00.123Z"],
  ])("clientTimestamp %s is stored as UTC %s", async (sent, stored) => {
    const key = await fresh();
    const res = await post("/logs", key, entry({ clientTimestamp: sent }));
    expect(res.status).toBe(201);
    expect((await res.json()).client_timestamp).toBe(stored);
  });

  test("validation errors of a single entry are listed with log_index null, and nothing is stored", async () => {
    const key = await fresh();
    const body = await expectError(await post("/logs", key, { level: "loud", clientTimestamp: "2026-11-22" }), 400, "VALIDATION_FAILED");
    expect(pairs(body.details.errors)).toEqual(["null:action", "null:clientTimestamp", "null:level"]);
    expect(await listAll(key)).toEqual([]);
  });
});

describe("POST /logs/bulk", () => {
  test("201 {count, ids}: ids in input order and increasing, entries readable, one shared server_timestamp", async () => {
    const key = await fresh();
    const res = await post(
      "/logs/bulk",
      key,
      [0, 1, 2, 3, 4].map((i) => entry({ action: `a${i}` })),
    );
    expect(res.status).toBe(201);
    const { count, ids, ...rest } = await res.json();
    expect(rest).toEqual({});
    expect(count).toBe(5);
    expect(ids).toHaveLength(5);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
    const stored = await Promise.all(ids.map(async (id: string) => (await get(`/logs/${id}`, key)).json()));
    expect(stored.map((e) => e.action)).toEqual(["a0", "a1", "a2", "a3", "a4"]);
    expect(new Set(stored.map((e) => e.server_timestamp)).size).toBe(1);
    expect(stored[0].server_timestamp).toMatch(UTC_MS);
  });

  test("all or nothing: one bad entry stores nothing and details.errors lists every problem with its log_index", async () => {
    const key = await fresh();
    expect((await post("/logs", key, entry())).status).toBe(201);
    const [listed, used] = [await listAll(key), await usedOf(key)];
    const batch = [
      entry(),
      { level: "loud", clientTimestamp: "2026-11-22T10:00:00" },
      entry(),
      entry({ action: "   ", metadata: "not an object" }),
      entry({ clientTimestamp: "2026-02-30T10:00:00Z" }),
    ];
    const body = await expectError(await post("/logs/bulk", key, batch), 400, "VALIDATION_FAILED");
    expect(pairs(body.details.errors)).toEqual(["1:action", "1:clientTimestamp", "1:level", "3:action", "3:metadata", "4:clientTimestamp"]);
    expect(await listAll(key)).toEqual(listed);
    expect(await usedOf(key)).toBe(used);
  });

  test("an empty array is 400 VALIDATION_FAILED", async () => {
    const key = await fresh();
    await expectError(await post("/logs/bulk", key, []), 400, "VALIDATION_FAILED");
  });

  test("more than the plan's max_batch_size is 400 VALIDATION_BULK_LIMIT_EXCEEDED and stores nothing", async () => {
    const key = await fresh("free");
    const res = await post(
      "/logs/bulk",
      key,
      Array.from({ length: FREE_MAX_BATCH + 1 }, () => entry()),
    );
    await expectError(res, 400, "VALIDATION_BULK_LIMIT_EXCEEDED");
    expect(await usedOf(key)).toBe(0);
  });

  test("exactly max_batch_size entries are stored", async () => {
    const key = await fresh("free");
    const res = await post(
      "/logs/bulk",
      key,
      Array.from({ length: FREE_MAX_BATCH }, () => entry()),
    );
    expect(res.status).toBe(201);
    expect((await res.json()).count).toBe(FREE_MAX_BATCH);
    expect(await usedOf(key)).toBe(FREE_MAX_BATCH);
  });
});

describe("transport errors of the write endpoints", () => {
  const endpoints = [
    { path: "/logs", valid: entry(), ok: 201 },
    { path: "/logs/bulk", valid: [entry()], ok: 201 },
    { path: "/logs/validate", valid: entry(), ok: 200 },
  ];
  const rows = endpoints.flatMap((ep) => [
    { ...ep, name: "no Content-Type", type: undefined, raw: JSON.stringify(ep.valid), code: "VALIDATION_INVALID_CONTENT_TYPE" },
    { ...ep, name: "Content-Type text/plain", type: "text/plain", raw: JSON.stringify(ep.valid), code: "VALIDATION_INVALID_CONTENT_TYPE" },
    { ...ep, name: "a form Content-Type", type: "application/x-www-form-urlencoded", raw: JSON.stringify(ep.valid), code: "VALIDATION_INVALID_CONTENT_TYPE" },
    { ...ep, name: "an empty body", type: "application/json", raw: "", code: "VALIDATION_EMPTY_BODY" },
    { ...ep, name: "unparseable JSON", type: "application/json", raw: '{"action":', code: "VALIDATION_INVALID_JSON" },
  ]);
  test.each(rows)("$path with $name → 400 $code", async ({ path, type, raw, code }) => {
    const key = await fresh();
    await expectError(await send(path, key, encoder.encode(raw), type), 400, code);
  });

  test.each(endpoints)("$path accepts Content-Type application/json; charset=utf-8", async ({ path, valid, ok }) => {
    const key = await fresh();
    expect((await send(path, key, JSON.stringify(valid), "application/json; charset=utf-8")).status).toBe(ok);
  });

  test.each([
    ["/logs", [entry()]],
    ["/logs", 5],
    ["/logs", "x"],
    ["/logs", null],
    ["/logs/bulk", entry()],
    ["/logs/bulk", 5],
    ["/logs/bulk", null],
  ])("%s with top-level %j → 400 VALIDATION_INVALID_REQUEST", async (path, body) => {
    const key = await fresh();
    await expectError(await post(path as string, key, body), 400, "VALIDATION_INVALID_REQUEST");
  });

  describe.each(endpoints)("body size limit of $path (free plan: 50 × 700 + 64 KiB bytes)", ({ path, valid, ok }) => {
    test("a valid body of exactly the limit is accepted", async () => {
      const key = await fresh("free");
      expect((await send(path, key, padded(valid, FREE_BODY_LIMIT), "application/json")).status).toBe(ok);
    });
    test("one byte over the limit with Content-Length → 400 VALIDATION_FAILED", async () => {
      const key = await fresh("free");
      const bytes = padded(valid, FREE_BODY_LIMIT + 1);
      const res = await send(path, key, bytes, "application/json", { "content-length": String(bytes.length) });
      await expectError(res, 400, "VALIDATION_FAILED");
    });
    test("one byte over the limit streamed without Content-Length → 400 VALIDATION_FAILED", async () => {
      const key = await fresh("free");
      await expectError(await send(path, key, streamOf(padded(valid, FREE_BODY_LIMIT + 1)), "application/json"), 400, "VALIDATION_FAILED");
    });
    test("a 16 MiB stream is refused after about the limit, not read to the end", async () => {
      const key = await fresh("free");
      const chunk = encoder.encode(`${JSON.stringify(entry())},`.repeat(100));
      let pulled = 0;
      const long = new ReadableStream<Uint8Array>({
        pull(c) {
          if (pulled >= 16 * 1024 * 1024) return c.close(); // finite, so a server that reads it all fails instead of hanging
          pulled += chunk.length;
          c.enqueue(chunk);
        },
      });
      await expectError(await send(path, key, long, "application/json"), 400, "VALIDATION_FAILED");
      expect(pulled).toBeLessThan(FREE_BODY_LIMIT + 1024 * 1024);
    });
  });
});

describe("entry size limit: the UTF-8 size of the entry's JSON, however its text is written (free plan: 700 bytes)", () => {
  const LIMIT = 700;
  /** textOf writes an entry with a number as given, its message padded so that JSON.stringify of it parsed is `size` bytes. */
  const textOf = (number: string, size: number, space = 0) => {
    const write = (pad: string) => JSON.stringify({ ...entry(), message: pad, metadata: { n: 0 } }, null, space).replace(/"n": ?0/, `"n":${number}`);
    const pad = "a".repeat(size - stringified(write("")));
    return write(pad);
  };
  const stringified = (text: string) => encoder.encode(JSON.stringify(JSON.parse(text))).length;
  const cases = [
    { name: "exactly the limit, written compact", text: textOf("1", LIMIT), stored: true },
    { name: "exactly the limit, written with spaces that make the text longer", text: textOf("1", LIMIT, 8), stored: true },
    { name: "one byte over, written compact", text: textOf("1", LIMIT + 1), stored: false },
    {
      name: "one byte over from a 20-digit number that rounds to 21 digits, its text within the limit",
      text: textOf("99999999999999999999", LIMIT + 1),
      stored: false,
    },
    { name: "over from a number with an exponent (1e20 is 21 digits as JSON), its text within the limit", text: textOf("1e20", LIMIT + 16), stored: false },
  ];
  test("the texts are as named", () => {
    for (const c of cases) expect(stringified(c.text)).toBe(c.stored ? LIMIT : c.name.startsWith("over") ? LIMIT + 16 : LIMIT + 1);
    expect(encoder.encode(cases[1].text).length).toBeGreaterThan(LIMIT);
    expect(encoder.encode(cases[3].text).length).toBe(LIMIT);
    expect(encoder.encode(cases[4].text).length).toBeLessThan(LIMIT);
  });
  test.each(cases)("POST /logs: $name", async ({ text, stored }) => {
    const key = await fresh("free");
    const res = await send("/logs", key, text, "application/json");
    if (stored) return expect(res.status).toBe(201);
    const body = await expectError(res, 400, "VALIDATION_FAILED");
    expect(body.details.errors).toEqual([{ field: "", message: expect.stringContaining(`entry is ${stringified(text)} bytes as JSON`), log_index: null }]);
    expect(await usedOf(key)).toBe(0);
  });
  test.each(cases)("POST /logs/bulk, second of two entries: $name", async ({ text, stored }) => {
    const key = await fresh("free");
    const res = await send("/logs/bulk", key, `[${JSON.stringify(entry())} ,\n ${text}]`, "application/json");
    if (stored) return expect((await res.json()).count).toBe(2);
    const body = await expectError(res, 400, "VALIDATION_FAILED");
    expect(body.details.errors).toEqual([{ field: "", message: expect.stringContaining(`entry is ${stringified(text)} bytes as JSON`), log_index: 1 }]);
    expect(await usedOf(key)).toBe(0);
  });
});

describe("metadata depth limit over HTTP, whatever else in the entry nests (free plan: 3 levels)", () => {
  /** nested is an object `levels` deep, the object itself level 1 */
  const nested = (levels: number): Record<string, unknown> => (levels <= 1 ? { leaf: 1 } : { k: nested(levels - 1) });
  const cases = [
    { name: "metadata of exactly 3 levels is stored", over: { metadata: nested(3) }, stored: true },
    {
      name: "metadata of 3 levels beside an unknown field of 9 is stored (the rule is on the four object fields)",
      over: { metadata: nested(3), extra: nested(9) },
      stored: true,
    },
    {
      name: "a field repeated in the text, its deep first value dropped by JSON.parse, is stored",
      text: `{"action":"a.b","level":"info","clientTimestamp":"2026-11-22T10:00:00.000Z","context":${JSON.stringify(nested(8))},"context":{"ok":1}}`,
      stored: true,
    },
    { name: "context of 4 levels is refused on field context", over: { context: nested(4) }, stored: false },
  ];
  const textOf = (c: (typeof cases)[number]) => c.text ?? JSON.stringify(entry(c.over));
  test.each(cases)("POST /logs: $name", async (c) => {
    const key = await fresh("free");
    const res = await send("/logs", key, textOf(c), "application/json");
    if (c.stored) return expect(res.status).toBe(201);
    expect((await expectError(res, 400, "VALIDATION_FAILED")).details.errors.map((e: { field: string }) => e.field)).toEqual(["context"]);
  });
  test.each(cases)("POST /logs/bulk, second of two entries: $name", async (c) => {
    const key = await fresh("free");
    const res = await send("/logs/bulk", key, `[${JSON.stringify(entry())},${textOf(c)}]`, "application/json");
    if (c.stored) return expect(res.status).toBe(201);
    expect((await expectError(res, 400, "VALIDATION_FAILED")).details.errors.map((e: { log_index: number }) => e.log_index)).toEqual([1]);
  });
});

describe("POST /logs/validate", () => {
  test.each([
    ["one entry", entry()],
    ["a batch", [entry(), entry({ level: "error", tags: ["a", "a"] })]],
  ])("%s that is valid gives exactly {valid:true, warnings:[], errors:[]}", async (_name, body) => {
    const key = await fresh();
    const res = await post("/logs/validate", key, body);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ valid: true, warnings: [], errors: [] });
  });

  test.each([
    ["a single entry (log_index null)", { level: "loud", clientTimestamp: "2026-11-22T10:00:00Z" }, ["null:action", "null:level"]],
    ["a batch (log_index is the array index)", [entry(), entry({ action: "" }), entry({ tags: "t" })], ["1:action", "2:tags"]],
    ["an entry that is not an object", [entry(), 7], ["1:"]],
    ["a mismatched environment", entry({ environment: "production" }), ["null:environment"]],
    ["a mismatched environment in a batch", [entry(), entry({ environment: "staging" })], ["1:environment"]],
    ["an invalid environment", entry({ environment: "moon" }), ["null:environment"]],
  ])("invalid: %s → 200, valid false, one error per problem", async (_name, body, expected) => {
    const key = await fresh();
    const res = await post("/logs/validate", key, body);
    expect(res.status).toBe(200);
    const got = await res.json();
    expect(got.valid).toBe(false);
    expect(pairs(got.errors)).toEqual(expected as string[]);
  });

  test("unknown fields give warnings, not errors", async () => {
    const key = await fresh();
    const got = await (await post("/logs/validate", key, entry({ colour: "red" }))).json();
    expect(got.valid).toBe(true);
    expect(got.errors).toEqual([]);
    expect(got.warnings.length).toBeGreaterThan(0);
  });

  test('more than max_batch_size gives 200 with one error, field "" and log_index null; exactly max is valid', async () => {
    const key = await fresh("free");
    const over = await (
      await post(
        "/logs/validate",
        key,
        Array.from({ length: FREE_MAX_BATCH + 1 }, () => entry()),
      )
    ).json();
    expect(over.valid).toBe(false);
    expect(over.errors).toHaveLength(1);
    expect(over.errors[0]).toMatchObject({ field: "", log_index: null });
    const atMax = await (
      await post(
        "/logs/validate",
        key,
        Array.from({ length: FREE_MAX_BATCH }, () => entry()),
      )
    ).json();
    expect(atMax).toEqual({ valid: true, warnings: [], errors: [] });
  });

  test.each([
    ["5", 5],
    ["a string", "x"],
    ["null", null],
    ["true", true],
  ])("a body that is neither object nor array (%s) → 400", async (_n, body) => {
    const key = await fresh();
    const res = await post("/logs/validate", key, body);
    expect(res.status).toBe(400);
    expect((await res.json()).error_code).toMatch(/^VALIDATION_/);
  });

  test("stores nothing and counts toward no quota", async () => {
    const key = await fresh("free");
    expect((await post("/logs/validate", key, entry())).status).toBe(200);
    expect((await post("/logs/validate", key, [entry(), entry()])).status).toBe(200);
    expect(await listAll(key)).toEqual([]);
    const usage = await (await get("/usage", key)).json();
    expect({ used: usage.used, remaining: usage.remaining }).toEqual({ used: 0, remaining: 5000 });
  });
});

describe("GET /usage", () => {
  test("used counts stored entries only: not failed writes, not validations", async () => {
    const key = await fresh("free");
    expect((await post("/logs", key, entry())).status).toBe(201);
    expect((await post("/logs/bulk", key, [entry(), entry(), entry()])).status).toBe(201);
    expect((await post("/logs/bulk", key, [entry(), { level: "info" }])).status).toBe(400);
    expect((await post("/logs", key, { action: "x" })).status).toBe(400);
    expect(
      (
        await post(
          "/logs/bulk",
          key,
          Array.from({ length: FREE_MAX_BATCH + 1 }, () => entry()),
        )
      ).status,
    ).toBe(400);
    expect((await post("/logs/validate", key, [entry(), entry()])).status).toBe(200);
    const usage = await (await get("/usage", key)).json();
    expect({ used: usage.used, remaining: usage.remaining }).toEqual({ used: 4, remaining: 4996 });
    expect(await listAll(key)).toHaveLength(4);
  });
});

test("object fields come back exactly as sent, a __proto__ key included, and are queryable by path", async () => {
  const { startTestSluice: start, removeDir: remove, WS: ws } = await import("../helpers/sluice.ts");
  const t = start();
  const key = await (await t.workspace()).key("development", "rw");
  const raw =
    '{"action":"a","level":"info","clientTimestamp":"2026-11-22T10:00:00Z","metadata":{"__proto__":{"polluted":true},"n":-1.5e3,"s":"é\\u0000","nested":{"arr":[1,{"k":null}]}}}';
  const w = await t.call("POST", `${ws}/logs`, { key, raw, headers: { "content-type": "application/json" } });
  expect(w.status).toBe(201);
  const { id } = await w.json();
  const text = await (await t.call("GET", `${ws}/logs/${id}`, { key })).text();
  expect(text).toContain('"metadata":{"__proto__":{"polluted":true},"n":-1500,"s":"é\\u0000","nested":{"arr":[1,{"k":null}]}}');
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  const found = await (await t.call("POST", `${ws}/logs/query`, { key, body: { query: "metadata.__proto__.polluted=true" } })).json();
  expect(found.map((e: { id: string }) => e.id)).toEqual([id]);
  await t.close();
  remove(t.dir);
});
