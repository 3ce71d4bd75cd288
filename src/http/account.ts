// account routes: GET /info and GET /usage (contract §8).
import { Elysia } from "elysia";
import type { Caller } from "../auth/authenticate.ts";
import { InfoResponse, UsageResponse } from "../schema.ts";
import type { MetaStore } from "../storage/records/meta.ts";
import { monthOf, type UsageStore } from "../storage/usage.ts";
import { formatMs } from "../time.ts";
import { monthBounds } from "../limits/quota.ts";
import type { Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { json } from "./respond.ts";

/** usageOf reports the workspace's entries this UTC calendar month against its plan. */
export function usageOf(usage: UsageStore, caller: Caller, nowMs: number) {
  const { startMs: start, endMs: end } = monthBounds(nowMs);
  const used = usage.used(caller.workspace.id, monthOf(nowMs));
  const limit = caller.plan.logs_per_month;
  return {
    used,
    limit,
    remaining: limit < 0 ? -1 : Math.max(0, limit - used),
    period_start: formatMs(start),
    period_end: formatMs(end),
    resets_at: formatMs(end),
    plan_code: caller.plan.code,
  };
}

/** accountRoutes mounts /info and /usage under the workspace prefix. */
export function accountRoutes(gate: Gate, meta: MetaStore, usage: UsageStore) {
  return new Elysia()
    .get(
      "/usage",
      gate.guarded("logs:read", ({ caller, now, set }) => json(set, usageOf(usage, caller, now))),
      {
        detail: operation({
          summary: "This month's ingestion usage and limit",
          permission: "logs:read",
          responses: { 200: { description: "usage", schema: UsageResponse } },
          errors: [401, 429, 500],
        }),
      },
    )
    .get(
      "/info",
      gate.guarded("logs:read", ({ caller, now, set }) => {
        const { key, workspace, plan } = caller;
        const org = meta.org(workspace.org_id);
        const u = usageOf(usage, caller, now);
        return json(set, {
          organization: { id: workspace.org_id, name: org?.name ?? "" },
          project: { id: workspace.id, name: workspace.name },
          api_key: { id: key.id, name: key.name, scopes: key.scopes, environment_scopes: [`env:${key.environment}`] },
          plan: {
            code: plan.code,
            logs_per_month: plan.logs_per_month,
            log_retention_days: plan.log_retention_days,
            max_batch_size: plan.max_batch_size,
            max_log_size: plan.max_log_size,
          },
          usage: {
            current_month_used: u.used,
            current_month_limit: u.limit,
            current_month_remaining: u.remaining,
            period_start: u.period_start,
            period_end: u.period_end,
            resets_at: u.resets_at,
          },
          ingestion: { allowed_environments: [key.environment], default_environment: key.environment },
        });
      }),
      {
        detail: operation({
          summary: "The workspace, key, plan and usage behind this API key",
          permission: "logs:read",
          responses: { 200: { description: "info", schema: InfoResponse } },
          errors: [401, 429, 500],
        }),
      },
    );
}
