// The monthly quota and /usage, /info over HTTP (contract §3 order, §8), with an injected clock across month ends.
import { afterEach, describe, expect, test } from "bun:test";
import { BUILT_IN_PLANS, type Plan } from "../../src/limits/plans.ts";
import { WS, entry, removeDir, startTestSluice, type TestOptions, type TestSluice } from "../helpers/sluice.ts";

const T0 = Date.parse("2026-11-10T12:00:00.000Z");
const DEC_1 = Date.parse("2026-12-01T00:00:00.000Z");
const unlimited = BUILT_IN_PLANS.find((p) => p.code === "unlimited")!;
/** plans without rate limits, so that only the quota can refuse */
const Q1000: Plan = { ...unlimited, code: "q1000", logs_per_month: 1_000, requests_per_minute: -1, validate_requests_per_minute: -1 };
const Q3: Plan = { ...unlimited, code: "q3", logs_per_month: 3, requests_per_minute: -1, validate_requests_per_minute: -1, max_batch_size: 10 };

let now = T0;
const opened: TestSluice[] = [];
const options = (): TestOptions => ({ clock: () => now, plans: [...BUILT_IN_PLANS, Q1000, Q3], ipRatePerMinute: -1 });
/** open starts a fresh Sluice (or reopens `dir`) whose clock reads `now`. */
function open(dir?: string): TestSluice {
  const s = startTestSluice(dir, options());
  opened.push(s);
  return s;
}
/** restart closes a Sluice and opens its data directory again. */
async function restart(s: TestSluice): Promise<TestSluice> {
  opened.splice(opened.indexOf(s), 1);
  await s.close();
  return open(s.dir);
}
afterEach(async () => {
  for (const s of opened.splice(0)) {
    await s.close();
    removeDir(s.dir);
  }
  now = T0;
});

const get = (s: TestSluice, path: string, key: string) => s.call("GET", `${WS}${path}`, { key });
const post = (s: TestSluice, path: string, key: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });
const batch = (n: number, tag = "b") => Array.from({ length: n }, (_, i) => entry({ action: `${tag}.${i}` }));
const codeOf = async (r: Response) => `${r.status} ${((await r.clone().json()) as { error_code?: string }).error_code ?? ""}`.trim();
const usageOf = async (s: TestSluice, key: string) => (await get(s, "/usage", key)).json();
const limits = (r: Response) => ({
  limit: r.headers.get("x-ratelimit-limit"),
  remaining: r.headers.get("x-ratelimit-remaining"),
  reset: r.headers.get("x-ratelimit-reset"),
  retryAfter: r.headers.get("retry-after"),
});

/** storedCount pages through GET /logs and counts every entry the key can read. */
async function storedCount(s: TestSluice, key: string): Promise<number> {
  let count = 0;
  let cursor = "";
  for (;;) {
    const r = await get(s, `/logs?pageSize=100${cursor}`, key);
    count += (await r.json()).length;
    const id = r.headers.get("x-next-cursor-id");
    if (!id) return count;
    cursor = `&cursorID=${id}&cursorTS=${encodeURIComponent(r.headers.get("x-next-cursor-ts")!)}`;
  }
}

/** sizesFrom draws n batch sizes in min..max from a seeded generator, so every run sends the same writes. */
function sizesFrom(seed: number, n: number, min: number, max: number): number[] {
  let x = seed;
  return Array.from({ length: n }, () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return min + (x % (max - min + 1));
  });
}

describe("the quota boundary under concurrency", () => {
  // [seed, smallest and largest batch]: small batches tend to fill the quota exactly, large ones leave room for a top-up
  const mixes: [number, number, number][] = [
    [1, 1, 60],
    [2, 1, 60],
    [3, 20, 60],
    [4, 35, 90],
  ];
  test.each(mixes)(
    "seed %i, batches of %i–%i: parallel writes never pass 1,000; used = the accepted sizes; a top-up reaches exactly 1,000",
    async (seed, min, max) => {
      const s = open();
      const key = await (await s.workspace("q1000")).key("development", "rw");
      const sizes = sizesFrom(seed, 80, min, max);
      const answers = await Promise.all(
        sizes.map(async (n, i) => {
          const r = await post(s, "/logs/bulk", key, batch(n, `w${i}`));
          return { n, code: await codeOf(r), count: r.status === 201 ? (await r.json()).count : 0 };
        }),
      );
      const accepted = answers.filter((a) => a.code === "201");
      const refused = answers.filter((a) => a.code !== "201");
      expect(new Set(refused.map((a) => a.code))).toEqual(new Set(["429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED"]));
      expect(accepted.every((a) => a.count === a.n)).toBe(true);
      const total = accepted.reduce((sum, a) => sum + a.n, 0);
      expect(total).toBeLessThanOrEqual(1_000);
      expect((await usageOf(s, key)).used).toBe(total);
      expect(await storedCount(s, key)).toBe(total);
      // a write was refused only when it would have passed the limit, and the room left only shrinks
      const left = 1_000 - total;
      expect(refused.filter((a) => a.n <= left)).toEqual([]);

      if (left > 0) {
        expect(await codeOf(await post(s, "/logs/bulk", key, batch(left + 1)))).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
        expect((await usageOf(s, key)).used).toBe(total);
        expect(await codeOf(await post(s, "/logs/bulk", key, batch(left)))).toBe("201");
      }
      expect(await usageOf(s, key)).toMatchObject({ used: 1_000, remaining: 0 });
      expect(await codeOf(await post(s, "/logs", key, entry()))).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
      expect(await storedCount(s, key)).toBe(1_000);
    },
  );

  test("60 parallel batches of 40 against 1,000: exactly 25 are stored and used is exactly 1,000", async () => {
    const s = open();
    const key = await (await s.workspace("q1000")).key("development", "rw");
    const codes = await Promise.all(Array.from({ length: 60 }, async (_, i) => codeOf(await post(s, "/logs/bulk", key, batch(40, `w${i}`)))));
    expect(codes.filter((c) => c === "201").length).toBe(25);
    expect(codes.filter((c) => c === "429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED").length).toBe(35);
    expect(await usageOf(s, key)).toMatchObject({ used: 1_000, limit: 1_000, remaining: 0 });
    expect(await storedCount(s, key)).toBe(1_000);
  });

  test("1,100 parallel single writes against 1,000: exactly 1,000 are stored, across two keys of the workspace", async () => {
    const s = open();
    const ws = await s.workspace("q1000");
    const keys = [await ws.key("development", "rw"), await ws.key("production", "rw")];
    const codes = await Promise.all(Array.from({ length: 1_100 }, async (_, i) => codeOf(await post(s, "/logs", keys[i % 2], entry()))));
    expect(codes.filter((c) => c === "201").length).toBe(1_000);
    expect((await usageOf(s, keys[1])).used).toBe(1_000);
    expect((await storedCount(s, keys[0])) + (await storedCount(s, keys[1]))).toBe(1_000);
  });
});

describe("a write past the quota", () => {
  test("stores nothing and answers 429 whose X-RateLimit-* describe the quota and Retry-After runs to the 1st of next month", async () => {
    const s = open();
    const key = await (await s.workspace("q3")).key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(2)))).toBe("201");
    const refused = await post(s, "/logs/bulk", key, batch(2));
    expect(await codeOf(refused)).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
    expect(limits(refused)).toEqual({ limit: "3", remaining: "1", reset: String(DEC_1 / 1000), retryAfter: String((DEC_1 - T0) / 1000) });
    expect(await storedCount(s, key)).toBe(2);
    expect((await usageOf(s, key)).used).toBe(2);

    expect(await codeOf(await post(s, "/logs", key, entry()))).toBe("201");
    const full = await post(s, "/logs", key, entry());
    expect(await codeOf(full)).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
    expect(limits(full)).toEqual({ limit: "3", remaining: "0", reset: String(DEC_1 / 1000), retryAfter: String((DEC_1 - T0) / 1000) });
    expect(await storedCount(s, key)).toBe(3);
  });

  test("the free plan's quota of 5,000 is enforced at its boundary", async () => {
    const s = open();
    const ws = await s.workspace("free");
    // 100 keys of 50-entry batches: 100 × 50 = 5,000, each key within its 120 requests a minute
    const keys = await Promise.all(Array.from({ length: 101 }, () => ws.key("development", "rw")));
    const codes = await Promise.all(keys.map(async (k, i) => codeOf(await post(s, "/logs/bulk", k, batch(50, `k${i}`)))));
    expect(codes.filter((c) => c === "201").length).toBe(100);
    expect(codes.filter((c) => c === "429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED").length).toBe(1);
    expect(await usageOf(s, keys[0])).toMatchObject({ used: 5_000, limit: 5_000, remaining: 0 });
  });

  // [what is wrong, the answer, the request]: a workspace over its quota still gets the earlier checks' answers
  const earlier: [string, string, (s: TestSluice, key: string) => Promise<Response>][] = [
    ["an invalid entry", "400 VALIDATION_FAILED", (s, k) => post(s, "/logs", k, { action: "x" })],
    ["a batch with an invalid entry", "400 VALIDATION_FAILED", (s, k) => post(s, "/logs/bulk", k, [entry(), { level: "info" }])],
    ["an empty batch", "400 VALIDATION_FAILED", (s, k) => post(s, "/logs/bulk", k, [])],
    ["a batch over max_batch_size", "400 VALIDATION_BULK_LIMIT_EXCEEDED", (s, k) => post(s, "/logs/bulk", k, batch(11))],
    ["an array sent to POST /logs", "400 VALIDATION_INVALID_REQUEST", (s, k) => post(s, "/logs", k, [entry()])],
    ["a body that is no environment", "400 VALIDATION_INVALID_ENVIRONMENT", (s, k) => post(s, "/logs", k, entry({ environment: "moon" }))],
    [
      "unparseable JSON",
      "400 VALIDATION_INVALID_JSON",
      (s, k) => s.call("POST", `${WS}/logs`, { key: k, raw: "{", headers: { "content-type": "application/json" } }),
    ],
    [
      "an empty body",
      "400 VALIDATION_EMPTY_BODY",
      (s, k) => s.call("POST", `${WS}/logs`, { key: k, raw: "", headers: { "content-type": "application/json" } }),
    ],
    [
      "a text/plain body",
      "400 VALIDATION_INVALID_CONTENT_TYPE",
      (s, k) => s.call("POST", `${WS}/logs`, { key: k, raw: JSON.stringify(entry()), headers: { "content-type": "text/plain" } }),
    ],
    ["another environment", "403 AUTH_API_KEY_SCOPE_MISMATCH", (s, k) => post(s, "/logs", k, entry({ environment: "production" }))],
    ["a valid write", "429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED", (s, k) => post(s, "/logs", k, entry())],
  ];
  test.each(earlier)("from a workspace over its quota, %s answers %s (the quota comes after the body)", async (_what, expected, send) => {
    const s = open();
    const key = await (await s.workspace("q3")).key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(3)))).toBe("201");
    expect(await codeOf(await send(s, key))).toBe(expected);
    expect((await usageOf(s, key)).used).toBe(3);
  });

  test("POST /logs/validate counts toward no quota and still answers 200 when the quota is used up", async () => {
    const s = open();
    const key = await (await s.workspace("q3")).key("development", "rw");
    for (let i = 0; i < 5; i++) expect(await codeOf(await post(s, "/logs/validate", key, batch(10)))).toBe("200");
    expect((await usageOf(s, key)).used).toBe(0);
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(3)))).toBe("201");
    for (const body of [entry(), batch(3)]) {
      const r = await post(s, "/logs/validate", key, body);
      expect([r.status, (await r.json()).valid]).toEqual([200, true]);
    }
    expect(await usageOf(s, key)).toMatchObject({ used: 3, remaining: 0 });
    expect(await storedCount(s, key)).toBe(3);
  });

  test("a plan change through the admin API moves the quota on the next write", async () => {
    const s = open();
    const ws = await s.workspace("unlimited");
    const key = await ws.key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(3)))).toBe("201");
    expect((await s.admin("PATCH", `/workspaces/${ws.id}`, { plan: "q3" })).status).toBe(200);
    expect(await codeOf(await post(s, "/logs", key, entry()))).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
    expect(await usageOf(s, key)).toMatchObject({ used: 3, limit: 3, remaining: 0, plan_code: "q3" });
    expect((await s.admin("PATCH", `/workspaces/${ws.id}`, { plan: "q1000" })).status).toBe(200);
    expect(await codeOf(await post(s, "/logs", key, entry()))).toBe("201");
  });
});

describe("the month rolls over at 00:00Z on the 1st", () => {
  // [last millisecond of a month, the month's start, the next month's start, the one after]
  const rows: [string, string, string, string][] = [
    ["2026-11-30T23:59:59.999Z", "2026-11-01T00:00:00.000Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z"],
    ["2026-12-31T23:59:59.999Z", "2026-12-01T00:00:00.000Z", "2027-01-01T00:00:00.000Z", "2027-02-01T00:00:00.000Z"],
    ["2028-02-29T23:59:59.999Z", "2028-02-01T00:00:00.000Z", "2028-03-01T00:00:00.000Z", "2028-04-01T00:00:00.000Z"],
  ];
  test.each(rows)("at %s usage counts that month; 1 ms later used is 0, the period moves and the quota is back", async (last, start, next, after) => {
    now = Date.parse(last);
    const s = open();
    const ws = await s.workspace("q3");
    const key = await ws.key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(3)))).toBe("201");
    expect(await usageOf(s, key)).toEqual({ used: 3, limit: 3, remaining: 0, period_start: start, period_end: next, resets_at: next, plan_code: "q3" });
    const refused = await post(s, "/logs", key, entry());
    expect(await codeOf(refused)).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
    expect(limits(refused)).toMatchObject({ reset: String(Date.parse(next) / 1000), retryAfter: "1" });

    now = Date.parse(next);
    expect(await usageOf(s, key)).toEqual({ used: 0, limit: 3, remaining: 3, period_start: next, period_end: after, resets_at: after, plan_code: "q3" });
    const info = await (await get(s, "/info", key)).json();
    expect(info.usage).toEqual({
      current_month_used: 0,
      current_month_limit: 3,
      current_month_remaining: 3,
      period_start: next,
      period_end: after,
      resets_at: after,
    });
    const written = await post(s, "/logs", key, entry());
    expect(await codeOf(written)).toBe("201");
    expect((await written.json()).server_timestamp).toBe(next);
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(2)))).toBe("201");
    expect(await codeOf(await post(s, "/logs", key, entry()))).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
    expect(s.svc.usage.used(ws.id, last.slice(0, 7))).toBe(3); // the old month's count is untouched
  });
});

describe("GET /usage and GET /info", () => {
  // [plan, limit (-1 when none)]
  const plans: [string, number][] = [
    ["free", 5_000],
    ["developer", 50_000],
    ["professional", 500_000],
    ["unlimited", -1],
    ["q1000", 1_000],
  ];
  test.each(plans)("/usage on the %s plan: used, limit %i, remaining, the UTC month and plan_code", async (plan, limit) => {
    const s = open();
    const key = await (await s.workspace(plan)).key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(2)))).toBe("201");
    expect(await usageOf(s, key)).toEqual({
      used: 2,
      limit,
      remaining: limit < 0 ? -1 : limit - 2,
      period_start: "2026-11-01T00:00:00.000Z",
      period_end: "2026-12-01T00:00:00.000Z",
      resets_at: "2026-12-01T00:00:00.000Z",
      plan_code: plan,
    });
  });

  test.each([["development"], ["staging"], ["production"]] as const)(
    "/info of a %s key fills every field from its workspace, organization, key and plan",
    async (env) => {
      const s = open();
      const created = await (await s.admin("POST", "/workspaces", { organization: "Acme", name: "checkout", plan: "developer" })).json();
      const made = await (await s.admin("POST", `/workspaces/${created.id}/keys`, { name: "ci", environment: env, type: "ro" })).json();
      const writer = (await s.svc.admin.createKey(created.id, { environment: env, type: "wo" })).key;
      expect(await codeOf(await post(s, "/logs", writer, entry()))).toBe("201");
      expect(await (await get(s, "/info", made.key)).json()).toEqual({
        organization: { id: created.organization.id, name: "Acme" },
        project: { id: created.id, name: "checkout" },
        api_key: { id: made.id, name: "ci", scopes: ["logs:read"], environment_scopes: [`env:${env}`] },
        plan: { code: "developer", logs_per_month: 50_000, log_retention_days: 45, max_batch_size: 200, max_log_size: 1_024 },
        usage: {
          current_month_used: 1,
          current_month_limit: 50_000,
          current_month_remaining: 49_999,
          period_start: "2026-11-01T00:00:00.000Z",
          period_end: "2026-12-01T00:00:00.000Z",
          resets_at: "2026-12-01T00:00:00.000Z",
        },
        ingestion: { allowed_environments: [env], default_environment: env },
      });
    },
  );

  test("/info on an unlimited plan reports limit and remaining as -1", async () => {
    const s = open();
    const key = await (await s.workspace("unlimited")).key("staging", "rw");
    const info = await (await get(s, "/info", key)).json();
    expect(info.usage).toMatchObject({ current_month_used: 0, current_month_limit: -1, current_month_remaining: -1 });
    expect(info.plan).toMatchObject({ code: "unlimited", logs_per_month: -1 });
  });

  test("usage is per workspace, counted over all its environments", async () => {
    const s = open();
    const ws = await s.workspace("q1000");
    const [dev, prod] = [await ws.key("development", "rw"), await ws.key("production", "rw")];
    const other = await (await s.workspace("q1000")).key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", dev, batch(4)))).toBe("201");
    expect(await codeOf(await post(s, "/logs/bulk", prod, batch(5)))).toBe("201");
    expect([(await usageOf(s, dev)).used, (await usageOf(s, prod)).used, (await usageOf(s, other)).used]).toEqual([9, 9, 0]);
  });
});

describe("usage survives a restart", () => {
  test("closing and reopening the data directory keeps the count and the quota it enforces", async () => {
    let s = open();
    const ws = await s.workspace("q3");
    const key = await ws.key("development", "rw");
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(2)))).toBe("201");
    s = await restart(s);
    expect(await usageOf(s, key)).toMatchObject({ used: 2, remaining: 1 });
    expect(await codeOf(await post(s, "/logs/bulk", key, batch(2)))).toBe("429 QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED");
    expect(await codeOf(await post(s, "/logs", key, entry()))).toBe("201");
    s = await restart(s);
    expect(await usageOf(s, key)).toMatchObject({ used: 3, remaining: 0 });
  });
});
