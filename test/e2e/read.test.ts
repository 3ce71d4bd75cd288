// Contract §5 (reading), §7 (errors and headers), §9 (interface documents) and persistence, over HTTP.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

interface Written {
  id: string;
  ts: string;
}
interface Cursor {
  id: string;
  ts: string;
}
type PageFn = (cursor?: Cursor) => Promise<Response>;

let s: TestSluice;
let bigKey: string;
let bigOrder: string[]; // ids of the 350-entry workspace in the contract's order

const fresh = async () => (await s.workspace()).key("development", "rw");
const post = (path: string, key: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });
const get = (path: string, key?: string) => s.call("GET", `${WS}${path}`, { key });
const qs = (params: Record<string, string | number>) =>
  new URLSearchParams(Object.entries(params).map(([k, v]): [string, string] => [k, String(v)])).toString();
const withCursor = (c?: Cursor): Record<string, string> => (c ? { cursorID: c.id, cursorTS: c.ts } : {});
const getPage =
  (key: string, params: Record<string, string | number> = {}): PageFn =>
  (c) =>
    get(`/logs?${qs({ ...params, ...withCursor(c) })}`, key);
const queryPage =
  (key: string, body: Record<string, unknown> = {}): PageFn =>
  (c) =>
    post("/logs/query", key, { ...body, ...withCursor(c) });

async function writeSingles(key: string, n: number, over: Record<string, unknown> = {}): Promise<Written[]> {
  const out: Written[] = [];
  for (let i = 0; i < n; i++) {
    const res = await post("/logs", key, entry(over));
    expect(res.status).toBe(201);
    const e = await res.json();
    out.push({ id: e.id, ts: e.server_timestamp });
  }
  return out;
}

async function writeBulk(key: string, n: number): Promise<Written[]> {
  const res = await post(
    "/logs/bulk",
    key,
    Array.from({ length: n }, (_, i) => entry({ action: `bulk.${i}` })),
  );
  expect(res.status).toBe(201);
  const { ids } = await res.json();
  const ts = (await (await get(`/logs/${ids[0]}`, key)).json()).server_timestamp;
  return ids.map((id: string) => ({ id, ts }));
}

/** ordered sorts written entries the contract's way: server_timestamp descending, then id descending. */
const ordered = (ws: Written[]) => [...ws].sort((a, b) => (a.ts !== b.ts ? (a.ts < b.ts ? 1 : -1) : a.id < b.id ? 1 : a.id > b.id ? -1 : 0)).map((w) => w.id);

/** pageThrough follows the cursor headers to the last page, checking that each cursor names its page's last entry. */
async function pageThrough(fetchPage: PageFn, pageSize: number, between?: () => Promise<unknown>): Promise<string[]> {
  const ids: string[] = [];
  let cursor: Cursor | undefined;
  for (let n = 0; n < 1000; n++) {
    const res = await fetchPage(cursor);
    expect(res.status).toBe(200);
    const page = await res.json();
    ids.push(...page.map((e: { id: string }) => e.id));
    const next = { id: res.headers.get("x-next-cursor-id"), ts: res.headers.get("x-next-cursor-ts") };
    if (next.id === null && next.ts === null) return ids;
    expect(page).toHaveLength(pageSize);
    expect(next).toEqual({ id: page[pageSize - 1].id, ts: page[pageSize - 1].server_timestamp });
    cursor = next as Cursor;
    await between?.();
  }
  throw new Error("paging did not end after 1000 pages");
}

async function expectError(res: Response, status: number, code: string) {
  const body = await res.json();
  expect({ status: res.status, code: body.error_code }).toEqual({ status, code });
  return body;
}

beforeAll(async () => {
  s = startTestSluice();
  bigKey = await fresh();
  const written = [
    ...(await writeBulk(bigKey, 120)),
    ...(await writeSingles(bigKey, 30)),
    ...(await writeBulk(bigKey, 100)),
    ...(await writeSingles(bigKey, 20)),
    ...(await writeBulk(bigKey, 80)),
  ];
  expect(written).toHaveLength(350);
  bigOrder = ordered(written);
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

describe("order and cursor paging", () => {
  test.each([10, 37, 100])("GET /logs pageSize %i: the cursor visits all 350 entries once, in order, last page without cursor", async (size) => {
    expect(await pageThrough(getPage(bigKey, { pageSize: size }), size)).toEqual(bigOrder);
  });

  test.each([
    [10, {}],
    [37, { query: "" }],
    [100, { query: null }],
  ])("POST /logs/query pageSize %i with %j pages through all 350 entries the same way", async (size, body) => {
    expect(await pageThrough(queryPage(bigKey, { ...body, pageSize: size }), size)).toEqual(bigOrder);
  });

  test("a page exactly full with nothing after it carries no cursor headers; one more entry adds them", async () => {
    const key = await fresh();
    const ten = await writeBulk(key, 10);
    const full = await getPage(key, { pageSize: 10 })();
    expect((await full.json()).map((e: { id: string }) => e.id)).toEqual(ordered(ten));
    expect([full.headers.get("x-next-cursor-id"), full.headers.get("x-next-cursor-ts")]).toEqual([null, null]);
    const eleven = [...ten, ...(await writeSingles(key, 1))];
    expect(await pageThrough(getPage(key, { pageSize: 10 }), 10)).toEqual(ordered(eleven));
    expect((await getPage(key, { pageSize: 10 })()).headers.get("x-next-cursor-id")).not.toBeNull();
  });

  test.each([
    ["GET /logs", (key: string) => getPage(key, { pageSize: 10 })],
    ["POST /logs/query", (key: string) => queryPage(key, { pageSize: 10 })],
  ])("%s: paging while entries keep arriving never repeats and never skips an entry stored before", async (_n, pager) => {
    const key = await fresh();
    const before = [...(await writeBulk(key, 25)), ...(await writeSingles(key, 15)), ...(await writeBulk(key, 20))];
    const arrive = async () => [await writeSingles(key, 1), await writeBulk(key, 3)];
    const seen = await pageThrough(pager(key), 10, arrive);
    expect(new Set(seen).size).toBe(seen.length);
    const old = new Set(before.map((w) => w.id));
    expect(seen.filter((id) => old.has(id))).toEqual(ordered(before));
  });
});

describe("time range: from inclusive, to exclusive, on server_timestamp", () => {
  let key: string;
  const t: string[] = [];
  const ids: string[] = [];
  beforeAll(async () => {
    key = await fresh();
    for (let i = 0; i < 6; i++) {
      const [w] = await writeSingles(key, 1, { action: `t${i}` });
      t.push(w.ts);
      ids.push(w.id);
      await Bun.sleep(3);
    }
  });
  /** plusOneHour renders a UTC timestamp as the same instant at offset +01:00. */
  const plusOneHour = (ts: string) => new Date(Date.parse(ts) + 3_600_000).toISOString().replace("Z", "+01:00");

  test("the six entries have increasing server timestamps", () => {
    for (let i = 1; i < 6; i++) expect(t[i] > t[i - 1]).toBe(true);
  });

  const cases: [string, (t: string[]) => Record<string, string>, number[]][] = [
    ["from t1 to t4 → 3, 2, 1", (t) => ({ from: t[1], to: t[4] }), [3, 2, 1]],
    ["from t2 → 5, 4, 3, 2", (t) => ({ from: t[2] }), [5, 4, 3, 2]],
    ["to t2 → 1, 0", (t) => ({ to: t[2] }), [1, 0]],
    ["from t2 to t2 → nothing", (t) => ({ from: t[2], to: t[2] }), []],
    ["from t2 at offset +01:00 → 5, 4, 3, 2", (t) => ({ from: plusOneHour(t[2]) }), [5, 4, 3, 2]],
    ["from t0 to t5 at offset +01:00 → 4 … 0", (t) => ({ from: t[0], to: plusOneHour(t[5]) }), [4, 3, 2, 1, 0]],
  ];
  test.each(cases)("GET /logs %s", async (_n, range, want) => {
    const res = await get(`/logs?${qs(range(t))}`, key);
    expect((await res.json()).map((e: { id: string }) => e.id)).toEqual(want.map((i) => ids[i]));
  });
  test.each(cases)("POST /logs/query %s", async (_n, range, want) => {
    const res = await post("/logs/query", key, range(t));
    expect((await res.json()).map((e: { id: string }) => e.id)).toEqual(want.map((i) => ids[i]));
  });

  test("from after to → 400 VALIDATION_QUERY_TIME_RANGE on both read endpoints", async () => {
    await expectError(await get(`/logs?${qs({ from: t[4], to: t[1] })}`, key), 400, "VALIDATION_QUERY_TIME_RANGE");
    await expectError(await post("/logs/query", key, { from: t[4], to: t[1] }), 400, "VALIDATION_QUERY_TIME_RANGE");
  });

  const notRfc3339 = ["2026-11-22", "2026-11-22T10:00:00", "2026-11-22 10:00:00Z", "yesterday", "2026-13-01T00:00:00Z", ""];
  const rows = notRfc3339.flatMap((v) => ["from", "to"].map((param) => ({ param, v })));
  test.each(rows)("GET /logs $param=$v (not RFC 3339) → 400 VALIDATION_QUERY_TIME_RANGE", async ({ param, v }) => {
    await expectError(await get(`/logs?${qs({ [param]: v })}`, key), 400, "VALIDATION_QUERY_TIME_RANGE");
  });
  test.each(rows)("POST /logs/query $param=$v (not RFC 3339) → 400 VALIDATION_QUERY_TIME_RANGE", async ({ param, v }) => {
    await expectError(await post("/logs/query", key, { [param]: v }), 400, "VALIDATION_QUERY_TIME_RANGE");
  });
});

describe("pageSize and cursor parameters", () => {
  test("pageSize defaults to 50 on both read endpoints", async () => {
    for (const res of [await get("/logs", bigKey), await post("/logs/query", bigKey, {})]) {
      expect((await res.json()).map((e: { id: string }) => e.id)).toEqual(bigOrder.slice(0, 50));
    }
  });

  test.each([10, 100])("pageSize %i is accepted", async (size) => {
    expect(await (await getPage(bigKey, { pageSize: size })()).json()).toHaveLength(size);
    expect(await (await queryPage(bigKey, { pageSize: size })()).json()).toHaveLength(size);
  });

  test.each(["9", "101", "10.5", "abc", "", "-10"])("GET /logs pageSize=%j → 400 VALIDATION_FAILED", async (size) => {
    await expectError(await get(`/logs?${qs({ pageSize: size })}`, bigKey), 400, "VALIDATION_FAILED");
  });
  test.each([9, 101, 10.5, "abc"])("POST /logs/query pageSize %j → 400 VALIDATION_FAILED", async (size) => {
    await expectError(await post("/logs/query", bigKey, { pageSize: size }), 400, "VALIDATION_FAILED");
  });

  const halfCursors = [
    ["only cursorID", () => ({ cursorID: bigOrder[0] })],
    ["only cursorTS", () => ({ cursorTS: "2026-11-22T10:00:00.000Z" })],
  ] as const;
  test.each(halfCursors)("%s → 400 VALIDATION_FAILED on both read endpoints", async (_n, half) => {
    await expectError(await get(`/logs?${qs(half())}`, bigKey), 400, "VALIDATION_FAILED");
    await expectError(await post("/logs/query", bigKey, half()), 400, "VALIDATION_FAILED");
  });
});

describe("filters of GET /logs and the body action of POST /logs/query", () => {
  let key: string;
  beforeAll(async () => {
    key = await fresh();
    const entries = [
      { action: "user.login", level: "info", message: "Login OK", tags: ["auth", "web"] },
      { action: "USER.LOGIN_failed", level: "error", message: "Bad *password*", tags: ["auth"] },
      { action: "payment.charge", level: "warn", message: "card declined", tags: ["billing"] },
      { action: "user*login", level: "debug" },
      { action: "payment.refund", level: "error", message: "refund LOGIN issue", tags: ["billing", "web"] },
    ];
    for (const e of entries) expect((await post("/logs", key, entry(e))).status).toBe(201);
  });
  const ALL = ["USER.LOGIN_failed", "payment.charge", "payment.refund", "user*login", "user.login"];
  const actionsOf = async (res: Response) => {
    expect(res.status).toBe(200);
    return (await res.json()).map((e: { action: string }) => e.action).sort();
  };

  test.each([
    [{}, ALL],
    [{ levels: "error" }, ["USER.LOGIN_failed", "payment.refund"]],
    [{ levels: "error,warn" }, ["USER.LOGIN_failed", "payment.charge", "payment.refund"]],
    [{ tags: "web" }, ["payment.refund", "user.login"]],
    [{ tags: "auth,billing" }, ["USER.LOGIN_failed", "payment.charge", "payment.refund", "user.login"]],
    [{ tags: "nope" }, []],
    [{ action: "LOGIN" }, ["USER.LOGIN_failed", "user*login", "user.login"]],
    [{ action: "user*" }, ["user*login"]],
    [{ action: "*" }, ["user*login"]],
    [{ message: "login" }, ["payment.refund", "user.login"]],
    [{ message: "*pass" }, ["USER.LOGIN_failed"]],
    [{ message: "card*" }, []],
    [{ levels: "error", action: "login" }, ["USER.LOGIN_failed"]],
    [{ levels: "error", tags: "web" }, ["payment.refund"]],
    [{ action: "payment", message: "declined" }, ["payment.charge"]],
    [{ levels: "info", tags: "billing" }, []],
    [{ environments: "development" }, ALL],
    [{ environments: "development", levels: "debug" }, ["user*login"]],
  ])("GET /logs?%j (substrings case-insensitive, * literal, lists any-of, all ANDed)", async (params, want) => {
    expect(await actionsOf(await get(`/logs?${qs(params)}`, key))).toEqual(want);
  });

  test.each(["loud", "error,loud", "ERROR"])("GET /logs?levels=%s (unknown level) → 400 VALIDATION_FAILED", async (levels) => {
    await expectError(await get(`/logs?${qs({ levels })}`, key), 400, "VALIDATION_FAILED");
  });

  test.each([
    ["LOGIN", ["USER.LOGIN_failed", "user*login", "user.login"]],
    ["user*", ["user*login"]],
    ["refund", ["payment.refund"]],
  ])("POST /logs/query action %j is a case-insensitive substring with * literal", async (action, want) => {
    expect(await actionsOf(await post("/logs/query", key, { action }))).toEqual(want);
  });

  test.each([[[]], ["x"], [5], [null]])("POST /logs/query with body %j (not an object) → 400", async (body) => {
    expect((await post("/logs/query", key, body)).status).toBe(400);
  });
});

describe("GET /logs/{id}", () => {
  test("returns the stored entry", async () => {
    const key = await fresh();
    const created = await (await post("/logs", key, entry({ message: "find me" }))).json();
    const res = await get(`/logs/${created.id}`, key);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(created);
  });

  test.each([
    ["a random UUID", () => crypto.randomUUID()],
    ["a UUIDv7 of a stored entry's millisecond that was never issued", () => `${bigOrder[0].slice(0, 24)}000000000000`],
    ["a path that is no UUID", () => "not-a-uuid"],
  ])("%s → 404 LOG_NOT_FOUND", async (_n, id) => {
    await expectError(await get(`/logs/${id()}`, bigKey), 404, "LOG_NOT_FOUND");
  });
});

describe("errors and headers (§7)", () => {
  const calls: [string, () => Promise<Response>, number][] = [
    ["GET /healthz", () => s.call("GET", "/healthz"), 200],
    ["GET /readyz", () => s.call("GET", "/readyz"), 200],
    ["GET /logs", () => get("/logs", bigKey), 200],
    ["POST /logs", () => post("/logs", bigKey, entry()), 201],
    ["POST /logs with a bad body", () => post("/logs", bigKey, { level: "info" }), 400],
    ["GET /logs without a key", () => get("/logs"), 401],
    ["GET /logs/{unknown id}", () => get(`/logs/${crypto.randomUUID()}`, bigKey), 404],
    ["an unknown route", () => s.call("GET", "/nope"), 404],
    ["GET openapi.json", () => get("/openapi.json"), 200],
  ];
  test.each(calls)("%s carries X-Request-Id as a UUID, and an error body repeats it as request_id", async (_n, call, status) => {
    const res = await call();
    expect(res.status).toBe(status);
    const requestId = res.headers.get("x-request-id");
    expect(requestId).toMatch(UUID);
    if (status >= 400) {
      const body = await res.json();
      expect(body).toMatchObject({ error_code: expect.any(String), message: expect.any(String), request_id: requestId });
    }
  });

  test.each(calls.filter(([name]) => name !== "GET openapi.json"))(
    "%s answers with a JSON body and Content-Type: application/json",
    async (_n, call, status) => {
      const res = await call();
      expect(res.status).toBe(status);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.json()).toBeInstanceOf(Object);
    },
  );

  test.each([
    ["GET", "/nope"],
    ["GET", `${WS}/nope`],
    ["POST", `${WS}/logs/x/y`],
    ["DELETE", `${WS}/logs`],
    ["GET", "/api/v2/workspace/logs"],
  ])("unknown route %s %s → 404 VALIDATION_INVALID_REQUEST", async (method, path) => {
    await expectError(await s.call(method, path), 404, "VALIDATION_INVALID_REQUEST");
  });

  test.each(["/healthz", "/livez"])('%s → 200 {"status":"ok"} without a key', async (path) => {
    const res = await s.call("GET", path);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ok" });
  });

  test("/readyz → 200 while storage is open", async () => {
    expect((await s.call("GET", "/readyz")).status).toBe(200);
  });
});

describe("interface documents (§9)", () => {
  const resolve = (doc: any, schema: any): any => {
    if (!schema?.$ref) return schema;
    return schema.$ref
      .slice(2)
      .split("/")
      .reduce((node: any, part: string) => node?.[part], doc);
  };

  test("openapi.json is served without a key: OpenAPI 3.1 with all eight workspace endpoints", async () => {
    const res = await get("/openapi.json");
    expect(res.status).toBe(200);
    const doc = await res.json();
    expect(String(doc.openapi).startsWith("3.1")).toBe(true);
    const ops = Object.entries(doc.paths as Record<string, Record<string, unknown>>).flatMap(([path, item]) =>
      Object.keys(item)
        .filter((m) => ["get", "post", "put", "patch", "delete"].includes(m))
        .map((m) => `${m.toUpperCase()} ${path.replace(/^\/api\/v1\/workspace/, "")}`),
    );
    expect(ops).toEqual(
      expect.arrayContaining([
        "GET /info",
        "GET /usage",
        "GET /logs",
        "POST /logs",
        "POST /logs/query",
        "POST /logs/validate",
        "POST /logs/bulk",
        "GET /logs/{id}",
      ]),
    );
  });

  test("the POST /logs request body schema is CreateLogRequest with required [action, level, clientTimestamp]", async () => {
    const doc = await (await get("/openapi.json")).json();
    const item = doc.paths["/api/v1/workspace/logs"] ?? doc.paths["/logs"];
    const schema = resolve(doc, item.post.requestBody.content["application/json"].schema);
    expect(Object.keys(schema.properties).sort()).toEqual([
      "action",
      "actor",
      "clientTimestamp",
      "context",
      "environment",
      "level",
      "message",
      "metadata",
      "tags",
      "target",
    ]);
    expect([...schema.required].sort()).toEqual(["action", "clientTimestamp", "level"]);
  });

  test("GET /docs is a browsable HTML page", async () => {
    const res = await s.call("GET", "/docs");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/html");
    expect((await res.text()).toLowerCase()).toContain("<html");
  });
});

describe("persistence", () => {
  test("entries written before closing are read back the same after reopening the data directory", async () => {
    const first = startTestSluice();
    let second: TestSluice | undefined;
    let open = true;
    try {
      const key = await (await first.workspace()).key("development", "rw");
      const one = await (await first.call("POST", `${WS}/logs`, { key, body: entry({ message: "kept", tags: ["t"] }) })).json();
      expect((await first.call("POST", `${WS}/logs/bulk`, { key, body: [entry(), entry({ level: "error" })] })).status).toBe(201);
      const listed = await (await first.call("GET", `${WS}/logs`, { key })).json();
      expect(listed).toHaveLength(3);
      await first.close();
      open = false;
      second = startTestSluice(first.dir);
      expect(await (await second.call("GET", `${WS}/logs`, { key })).json()).toEqual(listed);
      expect(await (await second.call("GET", `${WS}/logs/${one.id}`, { key })).json()).toEqual(one);
      expect((await (await second.call("GET", `${WS}/usage`, { key })).json()).used).toBe(3);
    } finally {
      if (open) await first.close();
      await second?.close();
      removeDir(first.dir);
    }
  });
});
