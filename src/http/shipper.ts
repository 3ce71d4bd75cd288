// shipper: what every route of contract §11 shares: the gate (logs:write), the body (gzip and deflate, within the
// plan's limit), one write of the entries that pass, and the counters and rejection list of each request.
import { ApiError } from "../errors.ts";
import type { IngestService, ShippedResult } from "../ingest/ingest.ts";
import type { RejectionLog } from "../ingest/rejections.ts";
import type { Protocol, ShippedBody } from "../ingest/shipped.ts";
import { maxBodyBytes } from "../limits/plans.ts";
import { readBody } from "./body.ts";
import type { Call, Gate } from "./guard.ts";
import type { Metrics } from "./observe.ts";
import type { Reply } from "./respond.ts";

/** ShipperDeps are the parts the shipper routes share. */
export interface ShipperDeps {
  gate: Gate;
  ingest: IngestService;
  metrics: Metrics;
  rejections: RejectionLog;
}

interface Context {
  request: Request;
  params: Record<string, string>;
  set: Reply;
  server: { requestIP(r: Request): { address: string } | null } | null;
}

/**
 * shipperRoute admits a protocol request like any write (auth, rate limits, logs:write) and counts the requests
 * refused whole. `headers` go on every answer, errors included (Elasticsearch's product header).
 */
export function shipperRoute(
  deps: ShipperDeps,
  protocol: Protocol,
  handler: (call: Call<Record<string, string>>) => Promise<string | Uint8Array | Response>,
  headers: Record<string, string> = {},
) {
  const guarded = deps.gate.guarded<Record<string, string>>("logs:write", handler as (call: Call<Record<string, string>>) => Promise<string>);
  return async (ctx: Context) => {
    Object.assign(ctx.set.headers, headers);
    try {
      return await guarded(ctx);
    } catch (e) {
      if (e instanceof ApiError) deps.metrics.shippedRequests.inc({ protocol, reason: refusal(e) });
      throw e;
    }
  };
}

const refusal = (e: ApiError): string =>
  e.status === 429
    ? e.code === "QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED"
      ? "quota"
      : "rate_limit"
    : e.status === 400
      ? "undecodable"
      : e.status === 401 || e.status === 403
        ? "auth"
        : "other";

/** ship reads a protocol request's body, stores the entries that pass and records what was refused. */
export async function ship(deps: ShipperDeps, call: Call<unknown>, body: Omit<ShippedBody, "bytes" | "receivedMs" | "limit">): Promise<ShippedResult> {
  const { caller } = call;
  const limit = maxBodyBytes(caller.plan);
  const bytes = await readBody(call.request, limit, deps.gate.bodyTimeoutMs);
  const result = await deps.ingest.createShipped({ ...body, bytes, limit, receivedMs: call.now } as ShippedBody, caller);
  await noteShipped(deps, body.protocol, result, caller.workspace.id, caller.key.environment, call.now);
  return result;
}

/** noteShipped counts a request's entries by outcome and reason and lists its rejected ones. */
export async function noteShipped(
  deps: Pick<ShipperDeps, "metrics" | "rejections">,
  protocol: Protocol,
  result: Omit<ShippedResult, "ops">,
  ws: string,
  env: string,
  ms: number,
): Promise<void> {
  const { shipped } = deps.metrics;
  shipped.inc({ protocol, outcome: "received", reason: "" }, result.total);
  if (result.count > 0) shipped.inc({ protocol, outcome: "stored", reason: "" }, result.count);
  for (const r of result.rejected) shipped.inc({ protocol, outcome: "rejected", reason: reasonLabel(r.field) });
  await deps.rejections.note(ws, env, protocol, result.rejected, ms);
}

/** reasonLabel names a rejection for a metric label, from a bounded set: the entry field that failed. */
function reasonLabel(field: string): string {
  const root = field.split(".")[0];
  return `invalid_${["action", "level", "clientTimestamp", "message", "tags", "actor", "target", "context", "metadata"].includes(root) ? root : "entry"}`;
}
