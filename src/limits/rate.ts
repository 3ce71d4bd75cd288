// rate: which buckets a workspace call spends (contract §7, §8) and the headers that describe them.
import { ApiError, type ErrorCode } from "../errors.ts";
import { Buckets, type BucketState } from "./buckets.ts";
import type { Plan } from "./plans.ts";

export type CallKind = "validate" | "other";

/** Spender is who a call spends tokens as: a key, on its workspace's plan. */
export interface Spender {
  keyId: string;
  plan: Plan;
}

/** rateHeaders renders a bucket as X-RateLimit-Limit/Remaining/Reset. */
export function rateHeaders(s: Pick<BucketState, "limit" | "remaining" | "resetAt">): Record<string, string> {
  return { "x-ratelimit-limit": String(s.limit), "x-ratelimit-remaining": String(s.remaining), "x-ratelimit-reset": String(s.resetAt) };
}

/**
 * RateLimiter admits a call or throws 429. Every call spends one token of the client IP's bucket
 * and, on a limited plan, one of the key's bucket; validate calls also one of the key's validate bucket.
 * No bucket is spent unless all of them allow the call.
 */
export class RateLimiter {
  private readonly ips = new Buckets();
  private readonly keys = new Buckets();
  private readonly validates = new Buckets();

  /** ipPerMinute: a figure, or where to read it (a cluster node's share changes with the live front nodes) */
  constructor(private readonly ipRate: number | (() => number)) {}

  private get ipPerMinute(): number {
    return typeof this.ipRate === "number" ? this.ipRate : this.ipRate();
  }

  /** limitsIps tells whether admit needs the client's address (finding it costs a syscall per request). */
  get limitsIps(): boolean {
    return this.ipPerMinute > 0;
  }

  /** admit returns the headers for the bucket that applied, or throws the 429 of the first empty bucket. */
  admit(spender: Spender, clientIp: string, kind: CallKind, nowMs: number): Record<string, string> {
    const { plan, keyId } = spender;
    const checks: [Buckets, string, number, ErrorCode][] = [];
    const ipPerMinute = this.ipPerMinute;
    if (ipPerMinute > 0) checks.push([this.ips, clientIp, ipPerMinute, "RATE_LIMIT_IP_EXCEEDED"]);
    if (plan.requests_per_minute >= 0) checks.push([this.keys, keyId, plan.requests_per_minute, "RATE_LIMIT_PLAN_EXCEEDED"]);
    if (kind === "validate" && plan.validate_requests_per_minute >= 0) {
      checks.push([this.validates, keyId, plan.validate_requests_per_minute, "RATE_LIMIT_VALIDATE_EXCEEDED"]);
    }
    for (const [buckets, name, perMinute, code] of checks) {
      const s = buckets.take(name, perMinute, nowMs, false);
      if (!s.allowed) throw tooMany(code, s);
    }
    const states = checks.map(([buckets, name, perMinute]) => buckets.take(name, perMinute, nowMs));
    const applied = states[states.length - 1]; // the most specific: validate, else the key's, else the IP's
    return applied ? rateHeaders(applied) : {};
  }

  /** bucketsHeld counts buckets in memory, for tests of the memory bound. */
  bucketsHeld(): number {
    return this.ips.size + this.keys.size + this.validates.size;
  }
}

const WHAT: Partial<Record<ErrorCode, string>> = {
  RATE_LIMIT_IP_EXCEEDED: "too many requests from this client address",
  RATE_LIMIT_PLAN_EXCEEDED: "this key has used its plan's requests per minute",
  RATE_LIMIT_VALIDATE_EXCEEDED: "this key has used its plan's validate requests per minute",
};

function tooMany(code: ErrorCode, s: BucketState): ApiError {
  return new ApiError(
    429,
    code,
    `${WHAT[code]}; retry in ${s.retryAfter} s`,
    { retry_after: s.retryAfter },
    {
      ...rateHeaders(s),
      "retry-after": String(s.retryAfter),
    },
  );
}

/** clientIp is the socket address, or with `trustedHops` proxies the X-Forwarded-For entry that many hops back. */
export function clientIp(socketIp: string | undefined, forwardedFor: string | null, trustedHops: number): string {
  const chain = [
    socketIp ?? "unknown",
    ...(forwardedFor ?? "")
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean)
      .reverse(),
  ];
  return chain[Math.min(trustedHops, chain.length - 1)];
}
