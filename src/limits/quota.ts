// quota: the monthly entry quota per workspace, by calendar month in UTC (contract §8).
import { ApiError } from "../errors.ts";
import type { Plan } from "./plans.ts";

/** monthBounds gives the UTC calendar month holding an instant: its first millisecond and the next month's. */
export function monthBounds(nowMs: number): { startMs: number; endMs: number } {
  const d = new Date(nowMs);
  return { startMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), endMs: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/** quotaExceeded is the 429 of a write that would pass the quota; its rate-limit headers describe the quota. */
export function quotaExceeded(plan: Plan, used: number, wanted: number, nowMs: number): ApiError {
  const { endMs } = monthBounds(nowMs);
  const remaining = Math.max(0, plan.logs_per_month - used);
  const retryAfter = Math.max(1, Math.ceil((endMs - nowMs) / 1000));
  return new ApiError(
    429,
    "QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED",
    `this write of ${wanted} entries would pass the ${plan.code} plan's ${plan.logs_per_month} entries this month (${remaining} left); nothing was stored. It resets at ${new Date(endMs).toISOString()}`,
    { reason: "monthly_log_limit_exceeded", limit: plan.logs_per_month, used, remaining, resets_at: new Date(endMs).toISOString() },
    {
      "x-ratelimit-limit": String(plan.logs_per_month),
      "x-ratelimit-remaining": String(remaining),
      "x-ratelimit-reset": String(Math.ceil(endMs / 1000)),
      "retry-after": String(retryAfter),
    },
  );
}
