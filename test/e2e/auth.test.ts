// Authentication × scope × environment matrix for the eight workspace endpoints (contract §3, §7).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { WS, entry, removeDir, startTestSluice, type TestSluice } from "../helpers/sluice.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
type Headers = Record<string, string>;
type Perm = "logs:read" | "logs:write";

interface Endpoint {
  name: string;
  method: string;
  path: () => string;
  perm: Perm;
  body?: () => unknown;
  ok: number;
}

let s: TestSluice;
/** keys of workspace A (development unless named), plus one of workspace B */
const k: Record<string, string> = {};
/** seeded entries: A/development, A/staging, B/development */
const ids: Record<string, string> = {};
let wsA = "";

const ENDPOINTS: Endpoint[] = [
  { name: "GET /info", method: "GET", path: () => `${WS}/info`, perm: "logs:read", ok: 200 },
  { name: "GET /usage", method: "GET", path: () => `${WS}/usage`, perm: "logs:read", ok: 200 },
  { name: "GET /logs", method: "GET", path: () => `${WS}/logs`, perm: "logs:read", ok: 200 },
  { name: "POST /logs", method: "POST", path: () => `${WS}/logs`, perm: "logs:write", body: () => entry(), ok: 201 },
  { name: "POST /logs/query", method: "POST", path: () => `${WS}/logs/query`, perm: "logs:read", body: () => ({}), ok: 200 },
  { name: "POST /logs/validate", method: "POST", path: () => `${WS}/logs/validate`, perm: "logs:write", body: () => entry(), ok: 200 },
  { name: "POST /logs/bulk", method: "POST", path: () => `${WS}/logs/bulk`, perm: "logs:write", body: () => [entry(), entry()], ok: 201 },
  { name: "GET /logs/{id}", method: "GET", path: () => `${WS}/logs/${ids.devA}`, perm: "logs:read", ok: 200 },
];

const xKey = (key: string): Headers => ({ "x-api-key": key });
const apiKeyAuth = (key: string): Headers => ({ authorization: `ApiKey ${key}` });
const send = (ep: Endpoint, headers: Headers) => s.call(ep.method, ep.path(), { body: ep.body?.(), headers });

/** expectError checks status, error_code, the error body's shape and that request_id equals X-Request-Id. */
async function expectError(res: Response, status: number, code: string, reason?: string) {
  const text = await res.text();
  expect([res.status, text]).toEqual([status, expect.stringContaining(`"error_code":"${code}"`)]);
  const body = JSON.parse(text);
  expect(typeof body.message === "string" && body.message.length > 0).toBe(true);
  expect(body.request_id).toMatch(UUID);
  expect(res.headers.get("x-request-id")).toBe(body.request_id);
  if (reason !== undefined) expect(body.details?.reason).toBe(reason);
  return body;
}

/** expectOk checks a success status and returns the body text (shown in full when the status is wrong). */
async function expectOk(res: Response, status: number): Promise<string> {
  const text = await res.text();
  expect([res.status, text]).toEqual([status, expect.any(String)]);
  return text;
}

async function adminKey(workspaceId: string, body: Record<string, unknown>) {
  const res = await s.admin("POST", `/workspaces/${workspaceId}/keys`, body);
  expect(res.status).toBe(201);
  return (await res.json()) as { id: string; key: string };
}

async function seed(key: string, over: Record<string, unknown> = {}) {
  const res = await s.call("POST", `${WS}/logs`, { key, body: entry(over) });
  return JSON.parse(await expectOk(res, 201)).id as string;
}

beforeAll(async () => {
  s = startTestSluice();
  const a = await s.workspace();
  const b = await s.workspace();
  wsA = a.id;
  for (const t of ["ro", "wo", "rw"] as const) k[t] = await a.key("development", t);
  k.starRo = await a.key("development", "ro", { scopes: ["*"] });
  k.starWo = await a.key("development", "wo", { scopes: ["*"] });
  k.stagingRw = await a.key("staging", "rw");
  k.bRw = await b.key("development", "rw");
  k.expired = await a.key("development", "rw", { expires_at: "2020-01-01T00:00:00Z" });
  const revoked = await adminKey(a.id, { name: "to-revoke", environment: "development", type: "rw" });
  expect((await s.admin("DELETE", `/keys/${revoked.id}`)).status).toBe(204);
  k.revoked = revoked.key;
  ids.devA = await seed(k.rw, { action: "seed.dev" });
  ids.stagingA = await seed(k.stagingRw, { action: "seed.staging" });
  ids.devB = await seed(k.bRw, { action: "seed.b" });
});

afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

const BAD_KEYS: { rule: string; headers: () => Headers; code: string }[] = [
  { rule: "no key → 401 AUTH_MISSING_API_KEY", headers: () => ({}), code: "AUTH_MISSING_API_KEY" },
  { rule: "malformed key → 401 AUTH_INVALID_API_KEY", headers: () => xKey("sl_development_rw_tooShort"), code: "AUTH_INVALID_API_KEY" },
  { rule: "non-key text → 401 AUTH_INVALID_API_KEY", headers: () => xKey("hello world"), code: "AUTH_INVALID_API_KEY" },
  { rule: "unknown well-formed key → 401 AUTH_INVALID_API_KEY", headers: () => xKey(`sl_development_rw_${"A1b2".repeat(10)}`), code: "AUTH_INVALID_API_KEY" },
  { rule: "revoked key → 401 AUTH_INVALID_API_KEY", headers: () => xKey(k.revoked), code: "AUTH_INVALID_API_KEY" },
  { rule: "key past expires_at → 401 AUTH_API_KEY_EXPIRED", headers: () => xKey(k.expired), code: "AUTH_API_KEY_EXPIRED" },
];

describe("authentication", () => {
  for (const row of BAD_KEYS) {
    for (const ep of ENDPOINTS) {
      test(`${row.rule}: ${ep.name}`, async () => {
        await expectError(await send(ep, row.headers()), 401, row.code);
      });
    }
  }

  const ACCEPTED: { rule: string; headers: () => Headers; key: () => string }[] = [
    { rule: "key in X-API-Key is accepted", headers: () => xKey(k.rw), key: () => k.rw },
    { rule: "key in Authorization: ApiKey is accepted", headers: () => apiKeyAuth(k.rw), key: () => k.rw },
    {
      rule: "valid X-API-Key wins over an invalid Authorization",
      headers: () => ({ ...xKey(k.rw), ...apiKeyAuth(`sl_development_rw_${"Z".repeat(40)}`) }),
      key: () => k.rw,
    },
  ];
  for (const row of ACCEPTED) {
    for (const ep of ENDPOINTS) {
      test(`${row.rule} and never echoed: ${ep.name}`, async () => {
        const text = await expectOk(await send(ep, row.headers()), ep.ok);
        expect(text).not.toContain(row.key());
      });
    }
  }

  for (const ep of ENDPOINTS) {
    test(`invalid X-API-Key wins over a valid Authorization → 401 AUTH_INVALID_API_KEY: ${ep.name}`, async () => {
      await expectError(await send(ep, { ...apiKeyAuth(k.rw), ...xKey("sl_development_rw_tooShort") }), 401, "AUTH_INVALID_API_KEY");
    });
  }

  for (const [name, path] of [
    ["POST /logs", `${WS}/logs`],
    ["POST /logs/bulk", `${WS}/logs/bulk`],
  ]) {
    test(`the response of a successful write never contains the key: ${name}`, async () => {
      const body = name === "POST /logs" ? entry({ message: "hello" }) : [entry(), entry()];
      for (const headers of [xKey(k.wo), apiKeyAuth(k.wo)]) {
        const text = await expectOk(await s.call("POST", path, { body, headers }), 201);
        expect(text).not.toContain(k.wo);
        expect(text).not.toContain(k.wo.slice(18)); // not even its random part
      }
    });
  }
});

describe("permissions", () => {
  for (const ep of ENDPOINTS) {
    const lacking = ep.perm === "logs:read" ? "wo" : "ro";
    const holding = ep.perm === "logs:read" ? "ro" : "wo";
    test(`${lacking} key lacks ${ep.perm} → 403 AUTH_API_KEY_SCOPE_MISMATCH forbidden: ${ep.name}`, async () => {
      await expectError(await send(ep, xKey(k[lacking])), 403, "AUTH_API_KEY_SCOPE_MISMATCH", "forbidden");
    });
    test(`${holding} key holds ${ep.perm} → allowed: ${ep.name}`, async () => {
      await expectOk(await send(ep, xKey(k[holding])), ep.ok);
    });
    test(`rw key → allowed: ${ep.name}`, async () => {
      await expectOk(await send(ep, xKey(k.rw)), ep.ok);
    });
    test(`scopes ["*"] on a ${lacking}-type key → allowed whatever the type: ${ep.name}`, async () => {
      await expectOk(await send(ep, xKey(ep.perm === "logs:read" ? k.starWo : k.starRo)), ep.ok);
    });
  }
});

interface Case {
  rule: string;
  key: () => string;
  method: string;
  path: () => string;
  body?: unknown;
  status: number;
  code: string;
  reason?: string;
}
const MISMATCH = { status: 403, code: "AUTH_API_KEY_SCOPE_MISMATCH", reason: "environment_mismatch" };
const NO_ENV = { status: 400, code: "VALIDATION_INVALID_ENVIRONMENT" };
const NOT_FOUND = { status: 404, code: "LOG_NOT_FOUND" };
const logs = () => `${WS}/logs`;
const bulk = () => `${WS}/logs/bulk`;

const ENV_CASES: Case[] = [
  {
    rule: "POST /logs body environment staging (development key)",
    key: () => k.rw,
    method: "POST",
    path: logs,
    body: entry({ environment: "staging" }),
    ...MISMATCH,
  },
  {
    rule: "POST /logs body environment production (development key)",
    key: () => k.rw,
    method: "POST",
    path: logs,
    body: entry({ environment: "production" }),
    ...MISMATCH,
  },
  {
    rule: "POST /logs/bulk first entry's environment staging",
    key: () => k.rw,
    method: "POST",
    path: bulk,
    body: [entry({ environment: "staging" }), entry()],
    ...MISMATCH,
  },
  {
    rule: "POST /logs/bulk a later entry's environment production",
    key: () => k.rw,
    method: "POST",
    path: bulk,
    body: [entry(), entry(), entry({ environment: "production" })],
    ...MISMATCH,
  },
  { rule: "GET /logs environments=staging", key: () => k.rw, method: "GET", path: () => `${logs()}?environments=staging`, ...MISMATCH },
  { rule: "GET /logs environments=development,staging", key: () => k.rw, method: "GET", path: () => `${logs()}?environments=development,staging`, ...MISMATCH },
  {
    rule: 'scopes ["*"] never widens the environment: POST /logs staging',
    key: () => k.starRo,
    method: "POST",
    path: logs,
    body: entry({ environment: "staging" }),
    ...MISMATCH,
  },
  {
    rule: 'scopes ["*"] never widens the environment: POST /logs/bulk staging',
    key: () => k.starRo,
    method: "POST",
    path: bulk,
    body: [entry({ environment: "staging" })],
    ...MISMATCH,
  },
  {
    rule: 'scopes ["*"] never widens the environment: GET /logs environments=staging',
    key: () => k.starWo,
    method: "GET",
    path: () => `${logs()}?environments=staging`,
    ...MISMATCH,
  },
  {
    rule: 'scopes ["*"] never widens the environment: GET /logs/{id} of a staging entry',
    key: () => k.starWo,
    method: "GET",
    path: () => `${logs()}/${ids.stagingA}`,
    ...NOT_FOUND,
  },
  { rule: "POST /logs body environment that is no environment", key: () => k.rw, method: "POST", path: logs, body: entry({ environment: "moon" }), ...NO_ENV },
  {
    rule: "POST /logs body environment in the wrong case",
    key: () => k.rw,
    method: "POST",
    path: logs,
    body: entry({ environment: "Development" }),
    ...NO_ENV,
  },
  {
    rule: "POST /logs/bulk an entry's environment that is no environment",
    key: () => k.rw,
    method: "POST",
    path: bulk,
    body: [entry(), entry({ environment: "moon" })],
    ...NO_ENV,
  },
  { rule: "GET /logs environments naming no environment", key: () => k.rw, method: "GET", path: () => `${logs()}?environments=moon`, ...NO_ENV },
  { rule: "GET /logs/{id} of an entry in another environment", key: () => k.rw, method: "GET", path: () => `${logs()}/${ids.stagingA}`, ...NOT_FOUND },
  { rule: "GET /logs/{id} of an entry in another workspace", key: () => k.rw, method: "GET", path: () => `${logs()}/${ids.devB}`, ...NOT_FOUND },
  {
    rule: "GET /logs/{id} of another workspace's entry, seen from that side",
    key: () => k.bRw,
    method: "GET",
    path: () => `${logs()}/${ids.devA}`,
    ...NOT_FOUND,
  },
  { rule: "GET /logs/{id} with a path id that is no UUID", key: () => k.rw, method: "GET", path: () => `${logs()}/not-a-uuid`, ...NOT_FOUND },
  { rule: "GET /logs/{id} with an unknown UUID", key: () => k.rw, method: "GET", path: () => `${logs()}/${crypto.randomUUID()}`, ...NOT_FOUND },
];

const statusName = (c: { status: number; code: string; reason?: string }) => `${c.status} ${c.code}${c.reason ? ` ${c.reason}` : ""}`;

describe("environment", () => {
  for (const c of ENV_CASES) {
    test(`${c.rule} → ${statusName(c)}`, async () => {
      await expectError(await s.call(c.method, c.path(), { key: c.key(), body: c.body }), c.status, c.code, c.reason);
    });
  }

  test("a body environment equal to the key's own is accepted and stored in it", async () => {
    const stored = JSON.parse(await expectOk(await s.call("POST", logs(), { key: k.stagingRw, body: entry({ environment: "staging" }) }), 201));
    expect(stored.environment).toBe("staging");
  });

  test("an environments filter naming the key's own environment is allowed and lists only it", async () => {
    const list = JSON.parse(await expectOk(await s.call("GET", `${logs()}?environments=development`, { key: k.rw }), 200));
    expect(list.length).toBeGreaterThan(0);
    expect(list.every((e: { environment: string }) => e.environment === "development")).toBe(true);
    expect(list.map((e: { id: string }) => e.id)).not.toContain(ids.stagingA);
  });

  test("the key of the entry's own environment reads the entry the other environment cannot", async () => {
    const got = JSON.parse(await expectOk(await s.call("GET", `${logs()}/${ids.stagingA}`, { key: k.stagingRw }), 200));
    expect(got).toMatchObject({ id: ids.stagingA, environment: "staging", action: "seed.staging" });
  });

  test("a bulk refused for environment_mismatch stores none of its entries", async () => {
    const body = [entry({ action: "bulk.refused" }), entry({ action: "bulk.refused", environment: "staging" })];
    await expectError(await s.call("POST", bulk(), { key: k.rw, body }), 403, "AUTH_API_KEY_SCOPE_MISMATCH", "environment_mismatch");
    for (const key of [k.rw, k.stagingRw]) {
      const list = JSON.parse(await expectOk(await s.call("GET", `${logs()}?action=bulk.refused`, { key }), 200));
      expect(list).toEqual([]);
    }
  });
});

describe("workspace isolation", () => {
  test("an entry written in workspace A is invisible in workspace B: list, query, by id and usage", async () => {
    const b = await s.workspace();
    const bKey = await b.key("development", "rw");
    const id = await seed(k.rw, { action: "isolation.probe" });
    const seenByA = JSON.parse(await expectOk(await s.call("GET", `${logs()}?action=isolation.probe`, { key: k.rw }), 200));
    expect(seenByA.map((e: { id: string }) => e.id)).toEqual([id]);
    expect(JSON.parse(await expectOk(await s.call("GET", logs(), { key: bKey }), 200))).toEqual([]);
    expect(JSON.parse(await expectOk(await s.call("POST", `${logs()}/query`, { key: bKey, body: {} }), 200))).toEqual([]);
    await expectError(await s.call("GET", `${logs()}/${id}`, { key: bKey }), 404, "LOG_NOT_FOUND");
    expect(JSON.parse(await expectOk(await s.call("GET", `${WS}/usage`, { key: bKey }), 200)).used).toBe(0);
  });
});

const BAD_JSON = "{not json";
const ORDER_CASES: (Omit<Case, "key" | "body"> & { headers: () => Headers; raw?: string; body?: unknown })[] = [
  { rule: "unknown route without a key", headers: () => ({}), method: "GET", path: () => `${WS}/nope`, status: 404, code: "VALIDATION_INVALID_REQUEST" },
  {
    rule: "unknown route below /logs/bulk without a key",
    headers: () => ({}),
    method: "POST",
    path: () => `${bulk()}/extra`,
    raw: BAD_JSON,
    status: 404,
    code: "VALIDATION_INVALID_REQUEST",
  },
  {
    rule: "unknown route with an invalid key",
    headers: () => xKey("nope"),
    method: "GET",
    path: () => `${WS}/nope`,
    status: 404,
    code: "VALIDATION_INVALID_REQUEST",
  },
  ...["/logs", "/logs/bulk", "/logs/validate", "/logs/query"].flatMap((p) => [
    {
      rule: `bad key with an unparseable body on POST ${p}`,
      headers: () => xKey("sl_development_rw_tooShort"),
      method: "POST",
      path: () => `${WS}${p}`,
      raw: BAD_JSON,
      status: 401,
      code: "AUTH_INVALID_API_KEY",
    },
    {
      rule: `no key with an unparseable body on POST ${p}`,
      headers: () => ({}),
      method: "POST",
      path: () => `${WS}${p}`,
      raw: BAD_JSON,
      status: 401,
      code: "AUTH_MISSING_API_KEY",
    },
  ]),
  {
    rule: "expired key with an invalid entry on POST /logs",
    headers: () => xKey(k.expired),
    method: "POST",
    path: logs,
    body: { level: "loud" },
    status: 401,
    code: "AUTH_API_KEY_EXPIRED",
  },
  { rule: "ro key with an unparseable body on POST /logs", headers: () => xKey(k.ro), method: "POST", path: logs, raw: BAD_JSON, ...forbidden() },
  { rule: "ro key with an invalid entry on POST /logs", headers: () => xKey(k.ro), method: "POST", path: logs, body: { level: "loud" }, ...forbidden() },
  { rule: "ro key with an empty batch on POST /logs/bulk", headers: () => xKey(k.ro), method: "POST", path: bulk, body: [], ...forbidden() },
  {
    rule: "ro key with an unparseable body on POST /logs/validate",
    headers: () => xKey(k.ro),
    method: "POST",
    path: () => `${logs()}/validate`,
    raw: BAD_JSON,
    ...forbidden(),
  },
  {
    rule: "wo key with an array body on POST /logs/query",
    headers: () => xKey(k.wo),
    method: "POST",
    path: () => `${logs()}/query`,
    body: [1],
    ...forbidden(),
  },
  {
    rule: "wo key with a foreign environments filter on GET /logs (permission before environment)",
    headers: () => xKey(k.wo),
    method: "GET",
    path: () => `${logs()}?environments=staging`,
    ...forbidden(),
  },
  {
    rule: "wrong-environment entry that is otherwise invalid on POST /logs",
    headers: () => xKey(k.rw),
    method: "POST",
    path: logs,
    body: { environment: "staging", level: "loud" },
    ...MISMATCH,
  },
  {
    rule: "wrong-environment entry beside an invalid one on POST /logs/bulk",
    headers: () => xKey(k.rw),
    method: "POST",
    path: bulk,
    body: [{ action: "" }, { environment: "production" }],
    ...MISMATCH,
  },
  {
    rule: "foreign environments filter with a bad pageSize on GET /logs",
    headers: () => xKey(k.rw),
    method: "GET",
    path: () => `${logs()}?environments=staging&pageSize=5`,
    ...MISMATCH,
  },
  {
    rule: "permitted key with an unparseable body on POST /logs (the body is checked last)",
    headers: () => xKey(k.rw),
    method: "POST",
    path: logs,
    raw: BAD_JSON,
    status: 400,
    code: "VALIDATION_INVALID_JSON",
  },
];

function forbidden() {
  return { status: 403, code: "AUTH_API_KEY_SCOPE_MISMATCH", reason: "forbidden" };
}

describe("order of checks: route 404 → auth 401 → permission/environment 403 → body 400", () => {
  for (const c of ORDER_CASES) {
    test(`${c.rule} → ${statusName(c)}`, async () => {
      const headers = c.raw !== undefined ? { ...c.headers(), "content-type": "application/json" } : c.headers();
      await expectError(await s.call(c.method, c.path(), { headers, raw: c.raw, body: c.body }), c.status, c.code, c.reason);
    });
  }
});

describe("key lifecycle through the admin API", () => {
  test("a revoked key stops working immediately, on reads and writes", async () => {
    const created = await adminKey(wsA, { name: "short-lived", environment: "development", type: "rw" });
    await expectOk(await s.call("GET", `${WS}/info`, { key: created.key }), 200);
    expect((await s.admin("DELETE", `/keys/${created.id}`)).status).toBe(204);
    await expectError(await s.call("GET", `${WS}/info`, { key: created.key }), 401, "AUTH_INVALID_API_KEY");
    await expectError(await s.call("POST", logs(), { key: created.key, body: entry() }), 401, "AUTH_INVALID_API_KEY");
    await expectError(await s.call("GET", `${WS}/usage`, { headers: apiKeyAuth(created.key) }), 401, "AUTH_INVALID_API_KEY");
  });

  test("a rotated key's old secret answers 401 AUTH_INVALID_API_KEY and the new one works", async () => {
    const created = await adminKey(wsA, { name: "rotating", environment: "development", type: "rw" });
    await expectOk(await s.call("GET", `${WS}/info`, { key: created.key }), 200);
    const res = await s.admin("POST", `/keys/${created.id}/rotate`);
    expect(res.status).toBe(201);
    const rotated = (await res.json()) as { id: string; key: string };
    expect(rotated.id).toBe(created.id);
    expect(rotated.key).not.toBe(created.key);
    await expectError(await s.call("GET", `${WS}/info`, { key: created.key }), 401, "AUTH_INVALID_API_KEY");
    await expectError(await s.call("POST", logs(), { key: created.key, body: entry() }), 401, "AUTH_INVALID_API_KEY");
    const info = JSON.parse(await expectOk(await s.call("GET", `${WS}/info`, { key: rotated.key }), 200));
    expect(info.api_key.id).toBe(created.id);
    await expectOk(await s.call("POST", logs(), { headers: apiKeyAuth(rotated.key), body: entry() }), 201);
  });
});
