// RateLimiter and clientIp (contract §7, §8): which buckets a call spends, which one the headers describe, the client address.
import { describe, expect, test } from "bun:test";
import { ApiError } from "../../../src/errors.ts";
import { BUILT_IN_PLANS, type Plan } from "../../../src/limits/plans.ts";
import { clientIp, RateLimiter, type CallKind, type Spender } from "../../../src/limits/rate.ts";

const T0 = Date.parse("2026-11-10T12:00:00.000Z");
const plan = (code: string): Plan => BUILT_IN_PLANS.find((p) => p.code === code)!;
/** callerOf is who a call spends as: a key id and its plan. */
const callerOf = (keyId: string, code: string): Spender => ({ keyId, plan: plan(code) });

/** codeOf admits once and returns "ok" or the 429 error_code. */
function codeOf(l: RateLimiter, caller: Spender, ip: string, kind: CallKind, now = T0): string {
  try {
    l.admit(caller, ip, kind, now);
    return "ok";
  } catch (e) {
    if (e instanceof ApiError && e.status === 429) return e.code;
    throw e;
  }
}

describe("clientIp", () => {
  // [socket address, X-Forwarded-For, trusted hops, client address]
  const rows: [string | undefined, string | null, number, string][] = [
    ["10.0.0.9", null, 0, "10.0.0.9"],
    ["10.0.0.9", "1.1.1.1", 0, "10.0.0.9"], // no trusted proxy: the header is ignored
    ["10.0.0.9", "1.1.1.1", 1, "1.1.1.1"],
    ["10.0.0.9", "6.6.6.6, 1.1.1.1", 1, "1.1.1.1"], // what the client wrote itself is not trusted
    ["10.0.0.9", "6.6.6.6,1.1.1.1", 1, "1.1.1.1"],
    ["10.0.0.9", "6.6.6.6, 1.1.1.1, 10.0.0.8", 2, "1.1.1.1"],
    ["10.0.0.9", "6.6.6.6, 1.1.1.1, 10.0.0.8", 1, "10.0.0.8"],
    ["10.0.0.9", "1.1.1.1, 10.0.0.8", 3, "1.1.1.1"], // fewer entries than hops: the farthest one there is
    ["10.0.0.9", "", 1, "10.0.0.9"],
    [undefined, "1.1.1.1", 0, "unknown"],
    [undefined, "1.1.1.1", 1, "1.1.1.1"],
  ];
  test.each(rows)("socket %p, X-Forwarded-For %p, %i trusted hops → %p", (socket, xff, hops, expected) => {
    expect(clientIp(socket, xff, hops)).toBe(expected);
  });
});

describe("RateLimiter.admit", () => {
  test("a limited plan's headers describe the key's bucket; validate calls describe the validate bucket", () => {
    const l = new RateLimiter(6000);
    const free = callerOf("k1", "free");
    expect(l.admit(free, "1.1.1.1", "other", T0)["x-ratelimit-limit"]).toBe("120");
    expect(l.admit(free, "1.1.1.1", "validate", T0)).toEqual({
      "x-ratelimit-limit": "30",
      "x-ratelimit-remaining": "29",
      "x-ratelimit-reset": String(T0 / 1000 + 2),
    });
    // the validate call spent a token of the key's bucket as well
    expect(l.admit(free, "1.1.1.1", "other", T0)["x-ratelimit-remaining"]).toBe("117");
  });

  test("an unlimited plan's headers describe the per-IP bucket", () => {
    const l = new RateLimiter(6000);
    const h = l.admit(callerOf("k1", "unlimited"), "1.1.1.1", "validate", T0);
    expect(h).toEqual({ "x-ratelimit-limit": "6000", "x-ratelimit-remaining": "5999", "x-ratelimit-reset": String(T0 / 1000 + 1) });
  });

  test("the IP bucket applies to every key and refuses with RATE_LIMIT_IP_EXCEEDED", () => {
    const l = new RateLimiter(3);
    const codes = ["a", "b", "c", "d"].map((k) => codeOf(l, callerOf(k, "unlimited"), "1.1.1.1", "other"));
    expect(codes).toEqual(["ok", "ok", "ok", "RATE_LIMIT_IP_EXCEEDED"]);
    expect(codeOf(l, callerOf("a", "unlimited"), "2.2.2.2", "other")).toBe("ok");
  });

  test("no bucket is spent when another refuses: a call refused by the IP bucket leaves the key's tokens alone", () => {
    const l = new RateLimiter(2);
    const free = callerOf("k1", "free");
    expect([1, 2, 3].map(() => codeOf(l, free, "1.1.1.1", "other"))).toEqual(["ok", "ok", "RATE_LIMIT_IP_EXCEEDED"]);
    expect(l.admit(free, "2.2.2.2", "other", T0)["x-ratelimit-remaining"]).toBe("117");
  });

  test("an empty validate bucket refuses validate calls only; an empty key bucket refuses validate calls too", () => {
    const l = new RateLimiter(-1);
    const free = callerOf("k1", "free");
    const validates = Array.from({ length: 31 }, () => codeOf(l, free, "ip", "validate"));
    expect(validates.filter((c) => c === "ok").length).toBe(30);
    expect(validates[30]).toBe("RATE_LIMIT_VALIDATE_EXCEEDED");
    expect(codeOf(l, free, "ip", "other")).toBe("ok");

    const other = callerOf("k2", "free");
    for (let i = 0; i < 120; i++) codeOf(l, other, "ip", "other");
    expect([codeOf(l, other, "ip", "validate"), codeOf(l, other, "ip", "other")]).toEqual(["RATE_LIMIT_PLAN_EXCEEDED", "RATE_LIMIT_PLAN_EXCEEDED"]);
  });

  test("a refusal carries Retry-After ≥ 1 and the refusing bucket's headers", () => {
    const l = new RateLimiter(-1);
    const free = callerOf("k1", "free");
    for (let i = 0; i < 30; i++) l.admit(free, "ip", "validate", T0);
    let err: ApiError | undefined;
    try {
      l.admit(free, "ip", "validate", T0);
    } catch (e) {
      err = e as ApiError;
    }
    expect(err?.headers).toEqual({
      "x-ratelimit-limit": "30",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(T0 / 1000 + 60),
      "retry-after": "2",
    });
  });

  test("a million distinct client IPs over an advancing clock never hold more than 100,000 buckets", () => {
    const l = new RateLimiter(6000);
    const unlimited = callerOf("k1", "unlimited");
    let most = 0;
    for (let i = 0; i < 1_000_000; i++) {
      l.admit(unlimited, `10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`, "other", T0 + i);
      if ((i & 255) === 0) most = Math.max(most, l.bucketsHeld());
    }
    expect(Math.max(most, l.bucketsHeld())).toBeLessThanOrEqual(100_000);
  });
});
