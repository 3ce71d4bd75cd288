// The admin API of contract §2: workspaces, keys, rotation and revocation, with its auth and input checks.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { ADMIN_TOKEN, WS, entry, removeDir, startTestSluice, type TestSluice } from "../helpers/sluice.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
const WORKSPACE_FIELDS = ["created_at", "id", "name", "organization", "plan"];
const KEY_FIELDS = ["created_at", "environment", "expires_at", "hint", "id", "last_used_at", "name", "revoked_at", "scopes", "type"];
const PLANS: Record<string, { logs_per_month: number; log_retention_days: number; max_batch_size: number; max_log_size: number }> = {
  free: { logs_per_month: 5_000, log_retention_days: 21, max_batch_size: 50, max_log_size: 700 },
  developer: { logs_per_month: 50_000, log_retention_days: 45, max_batch_size: 200, max_log_size: 1_024 },
  professional: { logs_per_month: 500_000, log_retention_days: 120, max_batch_size: 1_000, max_log_size: 2_048 },
  unlimited: { logs_per_month: -1, log_retention_days: 3650, max_batch_size: 10_000, max_log_size: 65_536 },
};
const DEFAULT_SCOPES = { ro: ["logs:read"], wo: ["logs:write"], rw: ["logs:read", "logs:write"] };

type Json = Record<string, any>;
let s: TestSluice;
let ws: Json; // a workspace made through the admin API
let apiKey: Json; // a KeyCreated of ws

/** call sends an admin request; status is checked, and the body text shown when it is wrong. */
async function call(method: string, path: string, status: number, body?: unknown): Promise<Json> {
  const res = await s.admin(method, path, body);
  const text = await res.text();
  expect([res.status, text]).toEqual([status, expect.any(String)]);
  return text === "" ? {} : JSON.parse(text);
}

async function expectError(res: Response, status: number, codes: string[]): Promise<Json> {
  const text = await res.text();
  expect(res.status).toBe(status);
  const body = JSON.parse(text);
  expect(codes).toContain(body.error_code);
  expect(typeof body.message === "string" && body.message.length > 0).toBe(true);
  expect(body.request_id).toMatch(UUID);
  expect(res.headers.get("x-request-id")).toBe(body.request_id);
  return body;
}

function expectTimeNear(text: string, from: number) {
  expect(text).toMatch(RFC3339);
  expect(Date.parse(text)).toBeGreaterThanOrEqual(from - 1000);
  expect(Date.parse(text)).toBeLessThanOrEqual(Date.now() + 1000);
}

function expectWorkspace(w: Json, name: string, org: string, plan: string) {
  expect(Object.keys(w).sort()).toEqual(WORKSPACE_FIELDS);
  expect(w.id).toMatch(UUID);
  expect(w.name).toBe(name);
  expect(w.organization).toEqual({ id: expect.stringMatching(UUID), name: org });
  expect(w.plan).toEqual({ code: plan, ...PLANS[plan] });
  expect(w.created_at).toMatch(RFC3339);
}

function expectKey(k: Json, withSecret: boolean) {
  expect(Object.keys(k).sort()).toEqual(withSecret ? [...KEY_FIELDS, "key"].sort() : KEY_FIELDS);
  expect(k.id).toMatch(UUID);
  if (withSecret) {
    expect(k.key).toMatch(new RegExp(`^sl_${k.environment}_${k.type}_[A-Za-z0-9]{32,}$`));
    expect(k.hint).toBe(`${k.key.slice(0, 12)}…${k.key.slice(-4)}`);
  }
}

const listOf = async (path: string) => (await call("GET", path, 200)) as unknown as Json[];
const jsonOf = async (res: Response | Promise<Response>) => (await (await res).json()) as Json;
const createKey = (body: Json, wsId = ws.id) => call("POST", `/workspaces/${wsId}/keys`, 201, body);
const useKey = (key: string) => s.call("GET", `${WS}/info`, { key });

beforeAll(async () => {
  s = startTestSluice();
  ws = await call("POST", "/workspaces", 201, { name: "base", organization: "Base Org" });
  apiKey = await createKey({ name: "base-key", environment: "development", type: "rw" });
});

afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

describe("workspaces", () => {
  for (const plan of Object.keys(PLANS)) {
    test(`POST /workspaces with plan ${plan} → 201 Workspace carrying that plan's limits`, async () => {
      const before = Date.now();
      const w = await call("POST", "/workspaces", 201, { organization: "Acme", name: `checkout-${plan}`, plan });
      expectWorkspace(w, `checkout-${plan}`, "Acme", plan);
      expectTimeNear(w.created_at, before);
    });
  }

  test("POST /workspaces with only a name → plan unlimited, organization Default", async () => {
    expectWorkspace(await call("POST", "/workspaces", 201, { name: "defaults" }), "defaults", "Default", "unlimited");
  });

  test("an organization is reused by name, a new name makes a new one", async () => {
    const a = await call("POST", "/workspaces", 201, { organization: "Reuse Org", name: "a" });
    const b = await call("POST", "/workspaces", 201, { organization: "Reuse Org", name: "b" });
    const c = await call("POST", "/workspaces", 201, { organization: "Other Org", name: "c" });
    const d1 = await call("POST", "/workspaces", 201, { name: "d1" });
    const d2 = await call("POST", "/workspaces", 201, { name: "d2" });
    expect(b.organization).toEqual(a.organization);
    expect(c.organization.id).not.toBe(a.organization.id);
    expect(d2.organization).toEqual(d1.organization);
    expect(a.id).not.toBe(b.id);
  });

  test("GET /workspaces → 200 [Workspace] holding each created workspace as POST answered it", async () => {
    const made = await call("POST", "/workspaces", 201, { name: "listed", plan: "developer" });
    const list = await listOf("/workspaces");
    expect(Array.isArray(list)).toBe(true);
    for (const w of list) expect(Object.keys(w).sort()).toEqual(WORKSPACE_FIELDS);
    expect(list).toContainEqual(made);
    expect(list).toContainEqual(ws);
  });

  test("GET /workspaces/{id} → 200 the same Workspace", async () => {
    expect(await call("GET", `/workspaces/${ws.id}`, 200)).toEqual(ws);
  });

  test("PATCH /workspaces/{id} changes plan and name, and GET shows the change", async () => {
    const w = await call("POST", "/workspaces", 201, { name: "to-patch", organization: "Patch Org" });
    const byPlan = await call("PATCH", `/workspaces/${w.id}`, 200, { plan: "professional" });
    expectWorkspace(byPlan, "to-patch", "Patch Org", "professional");
    expect(byPlan).toMatchObject({ id: w.id, created_at: w.created_at, organization: w.organization });
    expectWorkspace(await call("PATCH", `/workspaces/${w.id}`, 200, { name: "renamed" }), "renamed", "Patch Org", "professional");
    expectWorkspace(await call("PATCH", `/workspaces/${w.id}`, 200, { name: "both", plan: "free" }), "both", "Patch Org", "free");
    expect(await call("GET", `/workspaces/${w.id}`, 200)).toEqual({ ...w, name: "both", plan: { code: "free", ...PLANS.free } });
  });

  test("a PATCH plan change takes effect on the workspace's next request", async () => {
    const w = await call("POST", "/workspaces", 201, { name: "upgrade" });
    const { key } = await createKey({ name: "k", environment: "staging", type: "rw" }, w.id);
    expect((await jsonOf(useKey(key))).plan.code).toBe("unlimited");
    await call("PATCH", `/workspaces/${w.id}`, 200, { plan: "developer" });
    const info = await jsonOf(useKey(key));
    expect(info.plan).toEqual({ code: "developer", ...PLANS.developer });
    const usage = await jsonOf(s.call("GET", `${WS}/usage`, { key }));
    expect({ plan_code: usage.plan_code, limit: usage.limit }).toEqual({ plan_code: "developer", limit: 50_000 });
  });
});

describe("keys", () => {
  const KINDS = [
    ["development", "ro"],
    ["staging", "wo"],
    ["production", "rw"],
  ] as const;
  for (const [environment, type] of KINDS) {
    test(`POST keys ${environment}/${type} → 201 KeyCreated with default scopes, sl_${environment}_${type}_ secret and hint`, async () => {
      const before = Date.now();
      const k = await createKey({ name: `k-${type}`, environment, type });
      expectKey(k, true);
      expect(k).toMatchObject({ name: `k-${type}`, environment, type, scopes: DEFAULT_SCOPES[type], expires_at: null, revoked_at: null, last_used_at: null });
      expectTimeNear(k.created_at, before);
      const info = await jsonOf(useKey(k.key));
      if (type === "wo")
        expect(info.error_code).toBe("AUTH_API_KEY_SCOPE_MISMATCH"); // the key exists but may not read
      else expect(info.api_key).toMatchObject({ id: k.id, scopes: DEFAULT_SCOPES[type], environment_scopes: [`env:${environment}`] });
    });
  }

  test('POST keys with scopes ["*"] and expires_at → both kept; the key works before it expires', async () => {
    const k = await createKey({ name: "ci", environment: "production", type: "ro", scopes: ["*"], expires_at: "2099-01-01T00:00:00Z" });
    expectKey(k, true);
    expect(k.scopes).toEqual(["*"]);
    expect(Date.parse(k.expires_at)).toBe(Date.parse("2099-01-01T00:00:00Z"));
    expect((await s.call("POST", `${WS}/logs`, { key: k.key, body: entry() })).status).toBe(201);
  });

  test("every created key gets its own secret", async () => {
    const made = await Promise.all([1, 2, 3].map(() => createKey({ name: "same", environment: "development", type: "rw" })));
    expect(new Set(made.map((k) => k.key)).size).toBe(3);
    expect(new Set(made.map((k) => k.id)).size).toBe(3);
  });

  test("GET keys → 200 [Key] without the secret or its hash anywhere in the JSON", async () => {
    const w = await call("POST", "/workspaces", 201, { name: "secrets" });
    const made = [
      await createKey({ name: "one", environment: "development", type: "ro" }, w.id),
      await createKey({ name: "two", environment: "production", type: "rw", scopes: ["*"] }, w.id),
    ];
    const res = await s.admin("GET", `/workspaces/${w.id}/keys`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const list = JSON.parse(text) as Json[];
    expect(list).toHaveLength(2);
    for (const k of list) expectKey(k, false);
    for (const { key, ...view } of made) {
      expect(list).toContainEqual(view);
      const digest = createHash("sha256").update(key).digest();
      for (const hidden of [key, key.slice(-32), digest.toString("hex"), digest.toString("base64"), digest.toString("base64url")]) {
        expect(text).not.toContain(hidden);
      }
    }
  });

  test("last_used_at is null until the key is used, then set to the time of use", async () => {
    const k = await createKey({ name: "used", environment: "development", type: "ro" });
    const find = async () => (await listOf(`/workspaces/${ws.id}/keys`)).find((x) => x.id === k.id)!;
    expect((await find()).last_used_at).toBeNull();
    const before = Date.now();
    expect((await useKey(k.key)).status).toBe(200);
    let seen = (await find()).last_used_at;
    for (let i = 0; i < 40 && seen === null; i++) {
      await Bun.sleep(25); // the use is recorded without holding up the request
      seen = (await find()).last_used_at;
    }
    expect(seen).not.toBeNull();
    expectTimeNear(seen, before - 60_000); // minute-accurate is enough
  });

  test("POST /keys/{id}/rotate → 201 KeyCreated: same id, name, scopes; new secret; the old one answers 401", async () => {
    const old = await createKey({
      name: "rotate-me",
      environment: "staging",
      type: "wo",
      scopes: ["logs:write", "logs:read"],
      expires_at: "2099-06-01T00:00:00Z",
    });
    const r = await call("POST", `/keys/${old.id}/rotate`, 201);
    expectKey(r, true);
    expect(r).toMatchObject({
      id: old.id,
      name: old.name,
      scopes: old.scopes,
      environment: old.environment,
      type: old.type,
      created_at: old.created_at,
      expires_at: old.expires_at,
      revoked_at: null,
    });
    expect(r.key).not.toBe(old.key);
    expect(r.hint).not.toBe(old.hint);
    await expectError(await useKey(old.key), 401, ["AUTH_INVALID_API_KEY"]);
    expect((await useKey(r.key)).status).toBe(200);
    const listed = (await listOf(`/workspaces/${ws.id}/keys`)).filter((x) => x.id === old.id);
    expect(listed.map((x) => x.hint)).toEqual([r.hint]);
  });

  test("DELETE /keys/{id} → 204 empty; the key answers 401 AUTH_INVALID_API_KEY and is listed as revoked", async () => {
    const k = await createKey({ name: "revoke-me", environment: "development", type: "rw" });
    expect((await useKey(k.key)).status).toBe(200);
    const before = Date.now();
    const res = await s.admin("DELETE", `/keys/${k.id}`);
    expect([res.status, await res.text()]).toEqual([204, ""]);
    await expectError(await useKey(k.key), 401, ["AUTH_INVALID_API_KEY"]);
    const listed = (await listOf(`/workspaces/${ws.id}/keys`)).find((x) => x.id === k.id)!;
    expectTimeNear(listed.revoked_at, before);
  });
});

const ADMIN_CALLS: [string, string, unknown?][] = [
  ["POST", "/workspaces", { name: "intruder" }],
  ["GET", "/workspaces"],
  ["GET", "/workspaces/{ws}"],
  ["PATCH", "/workspaces/{ws}", { name: "hijacked", plan: "free" }],
  ["POST", "/workspaces/{ws}/keys", { name: "intruder", environment: "production", type: "rw" }],
  ["GET", "/workspaces/{ws}/keys"],
  ["POST", "/keys/{key}/rotate"],
  ["DELETE", "/keys/{key}"],
];
const fill = (path: string) => path.replace("{ws}", ws.id).replace("{key}", apiKey.id);
const ADMIN_AUTH: [string, () => Record<string, string>, string[]][] = [
  ["no token → 401 AUTH_MISSING_API_KEY", () => ({}), ["AUTH_MISSING_API_KEY"]],
  ["wrong token → 401 AUTH_INVALID_API_KEY", () => ({ authorization: `Bearer ${ADMIN_TOKEN}x` }), ["AUTH_INVALID_API_KEY"]],
  ["an API key as the bearer token → 401 AUTH_INVALID_API_KEY", () => ({ authorization: `Bearer ${apiKey.key}` }), ["AUTH_INVALID_API_KEY"]],
  ["an API key in X-API-Key → 401 AUTH_MISSING_API_KEY", () => ({ "x-api-key": apiKey.key }), ["AUTH_MISSING_API_KEY"]],
  ["an API key as Authorization: ApiKey → 401", () => ({ authorization: `ApiKey ${apiKey.key}` }), ["AUTH_MISSING_API_KEY", "AUTH_INVALID_API_KEY"]],
];

describe("admin authentication", () => {
  for (const [rule, headers, codes] of ADMIN_AUTH) {
    for (const [method, path, body] of ADMIN_CALLS) {
      test(`${rule}: ${method} ${path}`, async () => {
        await expectError(await s.call(method, `/api/v1/admin${fill(path)}`, { headers: headers(), body }), 401, codes);
      });
    }
  }

  test("refused admin calls changed nothing", async () => {
    expect(await call("GET", `/workspaces/${ws.id}`, 200)).toEqual(ws);
    const list = await listOf("/workspaces");
    expect(list.filter((w) => w.name === "intruder")).toEqual([]);
    const keys = await listOf(`/workspaces/${ws.id}/keys`);
    expect(keys.filter((k) => k.name === "intruder")).toEqual([]);
    expect((await useKey(apiKey.key)).status).toBe(200);
  });
});

const BAD_INPUT: [string, string, () => string, unknown, string][] = [
  ["missing name", "POST", () => "/workspaces", { organization: "Acme" }, "name"],
  ["name not a string", "POST", () => "/workspaces", { name: 42 }, "name"],
  ["organization not a string", "POST", () => "/workspaces", { name: "x", organization: 5 }, "organization"],
  ["unknown plan", "POST", () => "/workspaces", { name: "x", plan: "platinum" }, "plan"],
  ["plan not a string", "POST", () => "/workspaces", { name: "x", plan: 3 }, "plan"],
  ["PATCH unknown plan", "PATCH", () => `/workspaces/${ws.id}`, { plan: "platinum" }, "plan"],
  ["PATCH name not a string", "PATCH", () => `/workspaces/${ws.id}`, { name: 7 }, "name"],
  ["key with a bad environment", "POST", () => `/workspaces/${ws.id}/keys`, { name: "k", environment: "moon", type: "rw" }, "environment"],
  ["key without environment", "POST", () => `/workspaces/${ws.id}/keys`, { name: "k", type: "rw" }, "environment"],
  ["key with a bad type", "POST", () => `/workspaces/${ws.id}/keys`, { name: "k", environment: "staging", type: "admin" }, "type"],
  ["key without type", "POST", () => `/workspaces/${ws.id}/keys`, { name: "k", environment: "staging" }, "type"],
  [
    "key with an unknown scope",
    "POST",
    () => `/workspaces/${ws.id}/keys`,
    { name: "k", environment: "staging", type: "rw", scopes: ["logs:delete"] },
    "scopes",
  ],
  ["key with scopes not an array", "POST", () => `/workspaces/${ws.id}/keys`, { name: "k", environment: "staging", type: "rw", scopes: "logs:read" }, "scopes"],
  [
    "key with expires_at not a date-time",
    "POST",
    () => `/workspaces/${ws.id}/keys`,
    { name: "k", environment: "staging", type: "rw", expires_at: "tomorrow" },
    "expires_at",
  ],
  [
    "key with expires_at not a real date",
    "POST",
    () => `/workspaces/${ws.id}/keys`,
    { name: "k", environment: "staging", type: "rw", expires_at: "2027-02-30T00:00:00Z" },
    "expires_at",
  ],
  [
    "key with expires_at without a zone",
    "POST",
    () => `/workspaces/${ws.id}/keys`,
    { name: "k", environment: "staging", type: "rw", expires_at: "2027-01-01T00:00:00" },
    "expires_at",
  ],
  [
    "key with expires_at a number",
    "POST",
    () => `/workspaces/${ws.id}/keys`,
    { name: "k", environment: "staging", type: "rw", expires_at: 12345 },
    "expires_at",
  ],
  ["key with name not a string", "POST", () => `/workspaces/${ws.id}/keys`, { name: 5, environment: "staging", type: "rw" }, "name"],
];

describe("admin input", () => {
  for (const [rule, method, path, body, field] of BAD_INPUT) {
    test(`${rule} → 400 VALIDATION_FAILED naming ${field} in details.errors`, async () => {
      const err = await expectError(await s.admin(method, path(), body), 400, ["VALIDATION_FAILED"]);
      expect(Array.isArray(err.details?.errors) && err.details.errors.length > 0).toBe(true);
      expect(err.details.errors.map((e: Json) => String(e.field).split(".")[0])).toContain(field);
    });
  }

  test("refused input creates and changes nothing", async () => {
    const workspaces = (await listOf("/workspaces")).length;
    const keys = (await listOf(`/workspaces/${ws.id}/keys`)).length;
    for (const [, method, path, body] of BAD_INPUT) await s.admin(method, path(), body);
    expect((await listOf("/workspaces")).length).toBe(workspaces);
    expect((await listOf(`/workspaces/${ws.id}/keys`)).length).toBe(keys);
    expect(await call("GET", `/workspaces/${ws.id}`, 200)).toEqual(ws);
  });

  const unknown = crypto.randomUUID();
  const UNKNOWN_IDS: [string, string, unknown?][] = [
    ["GET", `/workspaces/${unknown}`],
    ["GET", "/workspaces/not-a-uuid"],
    ["PATCH", `/workspaces/${unknown}`, { plan: "free" }],
    ["POST", `/workspaces/${unknown}/keys`, { name: "k", environment: "staging", type: "rw" }],
    ["GET", `/workspaces/${unknown}/keys`],
    ["POST", `/keys/${unknown}/rotate`],
    ["DELETE", `/keys/${unknown}`],
    ["DELETE", `/keys/not-a-uuid`],
  ];
  for (const [method, path, body] of UNKNOWN_IDS) {
    test(`unknown id → 404 VALIDATION_INVALID_REQUEST: ${method} ${path.replace(unknown, "{unknown}")}`, async () => {
      await expectError(await s.admin(method, path, body), 404, ["VALIDATION_INVALID_REQUEST"]);
    });
  }
});
