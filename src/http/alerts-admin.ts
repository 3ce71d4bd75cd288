// alerts-admin: the alert routes under /api/v1/admin/workspaces/{id}/environments/{env}/alerts (contract §16), with the
// admin token standing for a key of scope "*" bound to that workspace environment.
import { Elysia } from "elysia";
import type { AlertService } from "../alerts/service.ts";
import type { Caller } from "../auth/authenticate.ts";
import { ApiError, notFound } from "../errors.ts";
import type { PlanTable } from "../limits/plans.ts";
import { ENVIRONMENTS, type Environment } from "../schema.ts";
import type { KeyRecord, MetaStore } from "../storage/records/meta.ts";
import { adminCheck } from "./admin.ts";
import { type AlertGate, alertRoutes } from "./alerts.ts";
import type { Call } from "./guard.ts";

type Scoped = { id?: string | null; env?: string | null };

/** adminAlertRoutes mounts the alert routes for the admin token, one workspace environment per path. */
export function adminAlertRoutes(
  alerts: AlertService,
  meta: MetaStore,
  plans: PlanTable,
  envToken: string | undefined,
  clock: () => number,
  queryTimeoutMs: number,
) {
  const check = adminCheck(meta, envToken);
  const callerOf = (params: Scoped): Caller => {
    const workspace = meta.workspace(params.id ?? "");
    if (!workspace) throw notFound("VALIDATION_INVALID_REQUEST", `no workspace ${JSON.stringify(params.id ?? "")}`);
    const env = params.env ?? "";
    if (!(ENVIRONMENTS as readonly string[]).includes(env))
      throw new ApiError(400, "VALIDATION_INVALID_ENVIRONMENT", `${JSON.stringify(env)} is no environment: use one of ${ENVIRONMENTS.join(", ")}`);
    const key = { id: "admin", workspace_id: workspace.id, environment: env as Environment, scopes: ["*"] } as KeyRecord; // the admin token may do what a "*" key may
    return { key, workspace, plan: plans.get(workspace.plan) };
  };
  const gate: AlertGate = {
    bodyTimeoutMs: undefined,
    guarded<P, R extends string | Response = string>(_permission: string, handler: (call: Call<P>) => R | Promise<R>) {
      return ({ request, params, set, server }: Omit<Call<P>, "caller" | "now">) => {
        check(request);
        const now = clock();
        return handler({ request, caller: callerOf(params as Scoped), params, now, set, server });
      };
    },
  } as AlertGate;
  return new Elysia({ prefix: "/api/v1/admin/workspaces/:id/environments/:env" }).use(alertRoutes(gate, alerts, queryTimeoutMs, false));
}
