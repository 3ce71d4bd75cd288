// Rate limits over HTTP (contract §3 order of checks, §7 headers, §8 buckets), with an injected clock: no test sleeps.
import { afterEach, describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS, type Plan } from "../../src/limits/plans.ts";
import { WS, entry, removeDir, startTestSluice, type TestOptions, type TestSluice } from "../helpers/sluice.ts";

const T0 = Date.parse("2026-11-10T12:00:00.000Z"); // a whole second
const SEC = T0 / 1000;
const UNKNOWN_UUID = "0190f3a0-0000-7000-8000-000000000000";

let now = T0;
const opened: TestSluice[] = [];
/** open starts a fresh Sluice whose clock reads `now`, reset to T0. */
function open(opts: Omit<TestOptions, "clock"> = {}): TestSluice {
  now = T0;
  const s = startTestSluice(undefined, { clock: () => now, ...opts });
  opened.push(s);
  return s;
}
afterEach(async () => {
  for (const s of opened.splice(0)) {
    await s.close();
    removeDir(s.dir);
  }
});

/** limits reads the rate-limit headers of a response. */
const limits = (r: Response) => ({
  status: r.status,
  limit: r.headers.get("x-ratelimit-limit"),
  remaining: r.headers.get("x-ratelimit-remaining"),
  reset: r.headers.get("x-ratelimit-reset"),
  retryAfter: r.headers.get("retry-after"),
});
const get = (s: TestSluice, path: string, key: string, headers: Record<string, string> = {}) => s.call("GET", `${WS}${path}`, { key, headers });
const post = (s: TestSluice, path: string, key: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });
const codeOf = async (r: Response) => `${r.status} ${((await r.clone().json()) as { error_code?: string }).error_code ?? ""}`.trim();

/** spend makes n GET /usage calls (or validate calls) and returns how many were admitted. */
async function spend(s: TestSluice, key: string, n: number, kind: "usage" | "validate" = "usage", headers: Record<string, string> = {}) {
  let ok = 0;
  for (let i = 0; i < n; i++) {
    const r = kind === "usage" ? await get(s, "/usage", key, headers) : await post(s, "/logs/validate", key, entry());
    if (r.status === 200) ok++;
  }
  return ok;
}

interface Endpoint {
  name: string;
  method: string;
  path: (id: string) => string;
  body?: unknown;
}
const ENDPOINTS: Endpoint[] = [
  { name: "GET /info", method: "GET", path: () => "/info" },
  { name: "GET /usage", method: "GET", path: () => "/usage" },
  { name: "GET /logs", method: "GET", path: () => "/logs" },
  { name: "GET /logs/{id}", method: "GET", path: (id) => `/logs/${id}` },
  { name: "POST /logs/query", method: "POST", path: () => "/logs/query", body: { query: "" } },
  { name: "POST /logs", method: "POST", path: () => "/logs", body: entry() },
  { name: "POST /logs/bulk", method: "POST", path: () => "/logs/bulk", body: [entry(), entry()] },
  { name: "POST /logs/validate", method: "POST", path: () => "/logs/validate", body: entry() },
];

describe("every authenticated call spends a token and says so", () => {
  test.each(ENDPOINTS.map((e) => [e.name, e] as const))("%s spends one token of the key's bucket and carries X-RateLimit-*", async (name, ep) => {
    const s = open();
    const ws = await s.workspace("free");
    const writer = await ws.key("development", "rw"); // another key: its bucket is its own
    const { id } = await (await post(s, "/logs", writer, entry())).json();
    const key = await ws.key("development", "rw");

    const first = await s.call(ep.method, `${WS}${ep.path(id)}`, { key, body: ep.body });
    expect(first.status).toBeLessThan(300);
    const validate = name === "POST /logs/validate"; // its headers describe the validate bucket, 30/min
    expect(limits(first)).toEqual({
      status: first.status,
      limit: validate ? "30" : "120",
      remaining: validate ? "29" : "119",
      reset: String(validate ? SEC + 2 : SEC + 1), // full again after 2,000 ms or 500 ms
      retryAfter: null,
    });
    expect(limits(await get(s, "/usage", key)).remaining).toBe("118");
  });

  // [what, how to provoke it, status and code]; every answer after authentication carries the key's bucket
  const after: [string, (s: TestSluice, rw: string, ro: string) => Promise<Response>, string][] = [
    ["a 403 for a missing permission", (s, _rw, ro) => post(s, "/logs", ro, entry()), "403 AUTH_API_KEY_SCOPE_MISMATCH"],
    ["a 403 for another environment", (s, rw) => post(s, "/logs", rw, entry({ environment: "production" })), "403 AUTH_API_KEY_SCOPE_MISMATCH"],
    ["a 400 for an invalid entry", (s, rw) => post(s, "/logs", rw, { level: "info" }), "400 VALIDATION_FAILED"],
    [
      "a 400 for unparseable JSON",
      (s, rw) => s.call("POST", `${WS}/logs`, { key: rw, raw: "{", headers: { "content-type": "application/json" } }),
      "400 VALIDATION_INVALID_JSON",
    ],
    ["a 400 for a bad query", (s, rw) => post(s, "/logs/query", rw, { query: 'action="open' }), "400 VALIDATION_QUERY_SYNTAX"],
    ["a 400 for a bad page size", (s, rw) => get(s, "/logs?pageSize=5", rw), "400 VALIDATION_FAILED"],
    ["a 404 for an unknown entry", (s, rw) => get(s, `/logs/${UNKNOWN_UUID}`, rw), "404 LOG_NOT_FOUND"],
  ];
  test.each(after)("%s carries X-RateLimit-* of the key's bucket", async (_what, provoke, expected) => {
    const s = open();
    const ws = await s.workspace("free");
    const [rw, ro] = [await ws.key("development", "rw"), await ws.key("development", "ro")];
    const r = await provoke(s, rw, ro);
    expect(await codeOf(r)).toBe(expected);
    expect(limits(r)).toEqual({ status: r.status, limit: "120", remaining: "119", reset: String(SEC + 1), retryAfter: null });
  });

  test("on an unlimited plan the headers describe the per-IP bucket: 6,000/min by default, or SLUICE_IP_RATE_PER_MIN", async () => {
    const s = open();
    const ws = await s.workspace("unlimited");
    const [rw, ro] = [await ws.key("development", "rw"), await ws.key("development", "ro")];
    expect(limits(await get(s, "/usage", rw))).toEqual({ status: 200, limit: "6000", remaining: "5999", reset: String(SEC + 1), retryAfter: null });
    expect(limits(await post(s, "/logs", ro, entry()))).toEqual({ status: 403, limit: "6000", remaining: "5998", reset: String(SEC + 1), retryAfter: null });
    expect(limits(await post(s, "/logs/validate", rw, entry()))).toEqual({
      status: 200,
      limit: "6000",
      remaining: "5997",
      reset: String(SEC + 1),
      retryAfter: null,
    });

    const small = open({ ipRatePerMinute: 50 });
    const key = await (await small.workspace("unlimited")).key("development", "rw");
    expect(limits(await get(small, "/info", key))).toEqual({ status: 200, limit: "50", remaining: "49", reset: String(SEC + 2), retryAfter: null });
  });
});

describe("429 answers", () => {
  interface Row {
    opts: Omit<TestOptions, "clock">;
    plan: string;
    /** the calls that empty the bucket, all admitted */
    drain: number;
    kind: "usage" | "validate";
    /** the refused call */
    fire: (s: TestSluice, key: string) => Promise<Response>;
    expected: { code: string; limit: string; retryAfter: string };
  }
  const rows: [string, Row][] = [
    [
      "RATE_LIMIT_PLAN_EXCEEDED: the 121st call of a minute on the free plan",
      {
        opts: {},
        plan: "free",
        drain: 120,
        kind: "usage",
        fire: (s, k) => get(s, "/usage", k),
        expected: { code: "RATE_LIMIT_PLAN_EXCEEDED", limit: "120", retryAfter: "1" },
      },
    ],
    [
      "RATE_LIMIT_PLAN_EXCEEDED: a write after 120 reads",
      {
        opts: {},
        plan: "free",
        drain: 120,
        kind: "usage",
        fire: (s, k) => post(s, "/logs", k, entry()),
        expected: { code: "RATE_LIMIT_PLAN_EXCEEDED", limit: "120", retryAfter: "1" },
      },
    ],
    [
      "RATE_LIMIT_VALIDATE_EXCEEDED: the 31st validate call of a minute on the free plan",
      {
        opts: {},
        plan: "free",
        drain: 30,
        kind: "validate",
        fire: (s, k) => post(s, "/logs/validate", k, entry()),
        expected: { code: "RATE_LIMIT_VALIDATE_EXCEEDED", limit: "30", retryAfter: "2" },
      },
    ],
    [
      "RATE_LIMIT_IP_EXCEEDED: past SLUICE_IP_RATE_PER_MIN on an unlimited plan",
      {
        opts: { ipRatePerMinute: 4 },
        plan: "unlimited",
        drain: 4,
        kind: "usage",
        fire: (s, k) => get(s, "/info", k),
        expected: { code: "RATE_LIMIT_IP_EXCEEDED", limit: "4", retryAfter: "15" },
      },
    ],
    [
      "RATE_LIMIT_IP_EXCEEDED: the IP bucket empties before a free key's",
      {
        opts: { ipRatePerMinute: 4 },
        plan: "free",
        drain: 4,
        kind: "usage",
        fire: (s, k) => get(s, "/logs", k),
        expected: { code: "RATE_LIMIT_IP_EXCEEDED", limit: "4", retryAfter: "15" },
      },
    ],
  ];
  test.each(rows)("%s, with X-RateLimit-* (Reset = when full again) and Retry-After ≥ 1", async (_name, row) => {
    const s = open(row.opts);
    const key = await (await s.workspace(row.plan)).key("development", "rw");
    expect(await spend(s, key, row.drain, row.kind)).toBe(row.drain);
    const r = await row.fire(s, key);
    expect(await codeOf(r)).toBe(`429 ${row.expected.code}`);
    expect(limits(r)).toEqual({ status: 429, limit: row.expected.limit, remaining: "0", reset: String(SEC + 60), retryAfter: row.expected.retryAfter });
  });

  test("validate calls spend the key's bucket too: after 30 validate calls 89 plain calls remain", async () => {
    const s = open();
    const key = await (await s.workspace("free")).key("development", "rw");
    expect(await spend(s, key, 30, "validate")).toBe(30);
    expect(limits(await get(s, "/usage", key)).remaining).toBe("89");
    expect(await spend(s, key, 90)).toBe(89);

    // once the key's bucket is empty, a validate call is refused by it although its validate bucket holds tokens
    const other = await (await s.workspace("free")).key("development", "rw");
    expect(await spend(s, other, 10, "validate")).toBe(10);
    expect(await spend(s, other, 111)).toBe(110);
    expect(await codeOf(await post(s, "/logs/validate", other, entry()))).toBe("429 RATE_LIMIT_PLAN_EXCEEDED");
  });
});

describe("tokens refill evenly", () => {
  // [bucket, plan, IP limit, calls, per-minute figure]
  const rows: [string, string, number | undefined, "usage" | "validate", number][] = [
    ["a free key's bucket", "free", undefined, "usage", 120],
    ["a developer key's bucket", "developer", undefined, "usage", 300],
    ["a free key's validate bucket", "free", undefined, "validate", 30],
    ["the per-IP bucket", "unlimited", 60, "usage", 60],
  ];
  test.each(rows)("%s: one token back every 60,000/rpm ms, not 1 ms sooner; all of them after a minute", async (_name, plan, ip, kind, rpm) => {
    const s = open(ip === undefined ? {} : { ipRatePerMinute: ip });
    const key = await (await s.workspace(plan)).key("development", "rw");
    expect(await spend(s, key, rpm + 1, kind)).toBe(rpm);
    const interval = 60_000 / rpm;
    const seen: string[] = [];
    for (let k = 1; k <= 3; k++) {
      now = T0 + k * interval - 1;
      seen.push(`${k} early: ${await spend(s, key, 1, kind)}`);
      now = T0 + k * interval;
      seen.push(`${k} due: ${await spend(s, key, 3, kind)}`);
    }
    expect(seen).toEqual(["1 early: 0", "1 due: 1", "2 early: 0", "2 due: 1", "3 early: 0", "3 due: 1"]);
    now = T0 + 3 * interval + 60_000;
    expect(await spend(s, key, rpm + 1, kind)).toBe(rpm);
  });
});

describe("order of checks", () => {
  const badKeys: [string, Record<string, string>, string][] = [
    ["no key", {}, "401 AUTH_MISSING_API_KEY"],
    ["a malformed key", { "x-api-key": "not-a-key" }, "401 AUTH_INVALID_API_KEY"],
    ["an unknown key", { "x-api-key": `sl_development_rw_${"A".repeat(40)}` }, "401 AUTH_INVALID_API_KEY"],
  ];
  test.each(badKeys)("401 comes before 429: %s gets 401 while the IP bucket and a key's bucket are empty", async (_what, headers, expected) => {
    const s = open({ ipRatePerMinute: 3 });
    const key = await (await s.workspace("free")).key("development", "rw");
    expect(await spend(s, key, 4)).toBe(3);
    for (const path of ["/usage", "/logs"]) expect(await codeOf(await s.call("GET", `${WS}${path}`, { headers }))).toBe(expected);
    expect(await codeOf(await s.call("POST", `${WS}/logs`, { headers, body: entry() }))).toBe(expected);
  });

  test("401 comes before 429: revoked and expired keys get 401 while the IP bucket is empty", async () => {
    const s = open({ ipRatePerMinute: 1 });
    const ws = await s.workspace("free");
    const expired = await ws.key("development", "rw", { expires_at: "2026-11-01T00:00:00Z" });
    const revoked = await s.svc.admin.createKey(ws.id, { environment: "development", type: "rw" });
    expect(await spend(s, await ws.key("development", "rw"), 2)).toBe(1);
    expect((await s.admin("DELETE", `/keys/${revoked.id}`)).status).toBe(204);
    expect(await codeOf(await get(s, "/usage", revoked.key))).toBe("401 AUTH_INVALID_API_KEY");
    expect(await codeOf(await get(s, "/usage", expired))).toBe("401 AUTH_API_KEY_EXPIRED");
  });

  test("429 comes before 403: a read-only key with an empty bucket gets 429 on POST /logs, also for another environment", async () => {
    const s = open();
    const ws = await s.workspace("free");
    const ro = await ws.key("development", "ro");
    expect(await codeOf(await post(s, "/logs", ro, entry()))).toBe("403 AUTH_API_KEY_SCOPE_MISMATCH");
    expect(await spend(s, ro, 119)).toBe(119);
    expect(await codeOf(await post(s, "/logs", ro, entry()))).toBe("429 RATE_LIMIT_PLAN_EXCEEDED");
    expect(await codeOf(await post(s, "/logs/bulk", ro, [entry({ environment: "production" })]))).toBe("429 RATE_LIMIT_PLAN_EXCEEDED");
    const rw = await ws.key("development", "rw");
    expect(await spend(s, rw, 120)).toBe(120);
    expect(await codeOf(await post(s, "/logs", rw, entry({ environment: "production" })))).toBe("429 RATE_LIMIT_PLAN_EXCEEDED");
  });

  test("429 comes before 400: a key with an empty bucket gets 429 for an invalid body", async () => {
    const s = open();
    const key = await (await s.workspace("free")).key("development", "rw");
    expect(await spend(s, key, 120)).toBe(120);
    expect(await codeOf(await post(s, "/logs", key, { level: "nope" }))).toBe("429 RATE_LIMIT_PLAN_EXCEEDED");
    expect(await codeOf(await get(s, "/logs?pageSize=1", key))).toBe("429 RATE_LIMIT_PLAN_EXCEEDED");
  });

  test("404 for an unknown route comes before 401 and 429", async () => {
    const s = open({ ipRatePerMinute: 1 });
    const key = await (await s.workspace("free")).key("development", "rw");
    expect(await spend(s, key, 2)).toBe(1);
    expect(await codeOf(await s.call("GET", `${WS}/nope`))).toBe("404 VALIDATION_INVALID_REQUEST");
    expect(await codeOf(await get(s, "/nope", key))).toBe("404 VALIDATION_INVALID_REQUEST");
  });
});

describe("client address", () => {
  // [trusted hops, X-Forwarded-For of a first and a second call; same IP bucket?] with 1 request/min per IP
  const rows: [number, string | undefined, string | undefined, boolean][] = [
    [0, "1.1.1.1", "2.2.2.2", true], // SLUICE_TRUST_PROXY 0: the header is ignored
    [0, undefined, "2.2.2.2", true],
    [1, "1.1.1.1", "2.2.2.2", false],
    [1, "1.1.1.1", "6.6.6.6, 1.1.1.1", true], // a client cannot escape its bucket by prepending entries
    [1, "6.6.6.6, 1.1.1.1", "7.7.7.7, 1.1.1.1", true],
    [1, "1.1.1.1, 10.0.0.1", "1.1.1.1, 10.0.0.2", false], // one hop trusted: the nearest entry is the client
    [2, "1.1.1.1, 10.0.0.1", "2.2.2.2, 10.0.0.1", false], // two hops: the entry before the first proxy
    [2, "6.6.6.6, 1.1.1.1, 10.0.0.1", "7.7.7.7, 1.1.1.1, 10.0.0.2", true],
  ];
  test.each(rows)("with %i trusted hops, X-Forwarded-For %p then %p share a bucket: %p", async (hops, first, second, shared) => {
    const s = open({ ipRatePerMinute: 1, trustProxyHops: hops });
    const key = await (await s.workspace("unlimited")).key("development", "rw");
    const xff = (v: string | undefined): Record<string, string> => (v === undefined ? {} : { "x-forwarded-for": v });
    expect((await get(s, "/usage", key, xff(first))).status).toBe(200);
    expect(await codeOf(await get(s, "/usage", key, xff(second)))).toBe(shared ? "429 RATE_LIMIT_IP_EXCEEDED" : "200");
  });
});

/** tally counts answers: 2xx as "admitted", anything else by status and code. */
function tally(answers: string[]): Record<string, number> {
  const t: Record<string, number> = {};
  for (const a of answers) {
    const k = a.startsWith("2") ? "admitted" : a;
    t[k] = (t[k] ?? 0) + 1;
  }
  return t;
}

describe("concurrency", () => {
  test("1,000 parallel requests against a bucket of 100 tokens admit exactly 100; 600 ms later exactly one more", async () => {
    const burst: Plan = { ...BUILT_IN_PLANS[3], code: "burst", requests_per_minute: 100, validate_requests_per_minute: 100 };
    const s = open({ plans: [...BUILT_IN_PLANS, burst] });
    const key = await (await s.workspace("burst")).key("development", "rw");
    const calls = Array.from({ length: 1_000 }, (_, i) => (i % 2 ? get(s, "/usage", key) : post(s, "/logs", key, entry({ action: `burst.${i}` }))));
    const answers = await Promise.all(calls.map(async (c) => codeOf(await c)));
    expect(tally(answers)).toEqual({ admitted: 100, "429 RATE_LIMIT_PLAN_EXCEEDED": 900 });
    const stored = answers.filter((c, i) => i % 2 === 0 && c === "201").length;

    now += 600;
    const later = await Promise.all(Array.from({ length: 50 }, async () => codeOf(await get(s, "/usage", key))));
    expect(tally(later)).toEqual({ admitted: 1, "429 RATE_LIMIT_PLAN_EXCEEDED": 49 });

    now += 60_000;
    expect((await (await get(s, "/usage", key)).json()).used).toBe(stored);
  });
});

describe("plan changes", () => {
  test("a plan change through the admin API takes effect on the next request: limits, /usage and /info", async () => {
    const s = open();
    const ws = await s.workspace("free");
    const key = await ws.key("development", "rw");
    expect(limits(await get(s, "/usage", key)).limit).toBe("120");
    const patch = async (plan: string) => expect((await s.admin("PATCH", `/workspaces/${ws.id}`, { plan })).status).toBe(200);

    await patch("developer");
    const usage = await get(s, "/usage", key);
    expect(limits(usage).limit).toBe("300");
    expect(await usage.json()).toMatchObject({ plan_code: "developer", limit: 50_000 });
    const info = await (await get(s, "/info", key)).json();
    expect(info.plan).toEqual({ code: "developer", logs_per_month: 50_000, log_retention_days: 45, max_batch_size: 200, max_log_size: 1_024 });
    expect(info.usage.current_month_limit).toBe(50_000);

    await patch("unlimited");
    expect(limits(await get(s, "/info", key)).limit).toBe("6000");
    expect(
      (
        await post(
          s,
          "/logs/bulk",
          key,
          Array.from({ length: 51 }, () => entry()),
        )
      ).status,
    ).toBe(201);

    await patch("free");
    expect(
      await codeOf(
        await post(
          s,
          "/logs/bulk",
          key,
          Array.from({ length: 51 }, () => entry()),
        ),
      ),
    ).toBe("400 VALIDATION_BULK_LIMIT_EXCEEDED");
    expect(limits(await get(s, "/usage", key)).limit).toBe("120");
  });
});
