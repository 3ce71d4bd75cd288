// alert routes (contract §16) under the workspace prefix: channels, rules, silences, alerts, history and preview.
// Reading needs logs:read; creating, changing and deleting needs a key with scope "*".
import { Elysia } from "elysia";
import { shown } from "../alerts/channels.ts";
import type { AlertService } from "../alerts/service.ts";
import type { Caller } from "../auth/authenticate.ts";
import { forbidden } from "../errors.ts";
import { objectBody, readWindow } from "../query/explore-request.ts";
import { readJson } from "./body.ts";
import type { Call, Gate } from "./guard.ts";
import { scopeOf } from "./read.ts";
import { json, requestUrl } from "./respond.ts";

const BODY_LIMIT = 256 * 1024;
type Id = { id: string };

/** mayWrite throws 403 unless the key has scope "*", which alert writes need. */
function mayWrite(caller: Caller): void {
  if (!caller.key.scopes.includes("*")) {
    throw forbidden("forbidden", `changing alerts needs a key with scope "*"; this key's scopes are ${caller.key.scopes.join(", ")}`);
  }
}

const tenantOf = (caller: Caller) => ({ ws: caller.workspace.id, env: caller.key.environment });

/** alertRoutes mounts the alert endpoints. */
export function alertRoutes(gate: Gate, alerts: AlertService, queryTimeoutMs: number) {
  const body = async (request: Request, example: string) =>
    objectBody(await readJson(request, { bytes: BODY_LIMIT, depth: 8, timeoutMs: gate.bodyTimeoutMs }), example);
  const read = <P>(handler: (call: Call<P>) => unknown) => gate.guarded<P>("logs:read", async (call) => json(call.set, await handler(call)));
  const write = <P>(status: number, handler: (call: Call<P>) => unknown) =>
    gate.guarded<P>("logs:read", async (call) => {
      mayWrite(call.caller);
      const answer = await handler(call);
      if (status === 204) {
        call.set.status = 204;
        return "";
      }
      return json(call.set, answer, status);
    });
  const noParse = { parse: "none" as const };
  return new Elysia({ prefix: "/alerts" })
    .get(
      "/channels",
      read(({ caller }) => alerts.channels(tenantOf(caller))),
    )
    .post(
      "/channels",
      write(201, async ({ request, caller, now }) =>
        alerts.createChannel(tenantOf(caller), await body(request, '{"name": "ops", "type": "webhook", "config": {"url": "https://…"}}'), now),
      ),
      noParse,
    )
    .get(
      "/channels/:id",
      read<Id>(({ caller, params }) => shown(alerts.channel(tenantOf(caller), params.id))),
    )
    .patch(
      "/channels/:id",
      write<Id>(200, async ({ request, caller, params, now }) =>
        alerts.updateChannel(tenantOf(caller), params.id, await body(request, '{"name": "ops"}'), now),
      ),
      noParse,
    )
    .delete(
      "/channels/:id",
      write<Id>(204, ({ caller, params }) => alerts.deleteChannel(tenantOf(caller), params.id)),
    )
    .post(
      "/channels/:id/test",
      write<Id>(200, ({ caller, params, now }) => alerts.testChannel(tenantOf(caller), params.id, now)),
      noParse,
    )
    .get(
      "/rules",
      read(({ caller }) => alerts.rules(tenantOf(caller))),
    )
    .post(
      "/rules",
      write(201, async ({ request, caller, now }) =>
        alerts.createRule(
          tenantOf(caller),
          await body(request, '{"name": "errors", "query": "level=error", "condition": {"op": ">", "threshold": 10}, "window": "5m", "every": "1m"}'),
          now,
        ),
      ),
      noParse,
    )
    .post(
      "/rules/preview",
      read(async ({ request, caller, now }) => {
        const b = await body(request, '{"rule": {…}, "from": "2026-11-27T00:00:00Z", "to": "2026-11-27T12:00:00Z"}');
        const rule = objectBody(b.rule ?? null, '{"rule": {"name": "errors", "query": "level=error", …}}');
        const w = readWindow(b, "server", true);
        return alerts.preview(scopeOf(caller, now), rule, w.fromMs, w.toMs, queryTimeoutMs);
      }),
      noParse,
    )
    .get(
      "/rules/:id",
      read<Id>(({ caller, params }) => alerts.rule(tenantOf(caller), params.id)),
    )
    .patch(
      "/rules/:id",
      write<Id>(200, async ({ request, caller, params, now }) =>
        alerts.updateRule(tenantOf(caller), params.id, await body(request, '{"enabled": false}'), now),
      ),
      noParse,
    )
    .delete(
      "/rules/:id",
      write<Id>(204, ({ caller, params }) => alerts.deleteRule(tenantOf(caller), params.id)),
    )
    .get(
      "/silences",
      read(({ caller }) => alerts.silences(tenantOf(caller))),
    )
    .post(
      "/silences",
      write(201, async ({ request, caller, now }) =>
        alerts.createSilence(tenantOf(caller), await body(request, '{"starts_at": "…", "ends_at": "…", "comment": "maintenance"}'), now),
      ),
      noParse,
    )
    .delete(
      "/silences/:id",
      write<Id>(204, ({ caller, params }) => alerts.deleteSilence(tenantOf(caller), params.id)),
    )
    .get(
      "",
      read(({ caller }) => alerts.alerts(tenantOf(caller))),
    )
    .get(
      "/history",
      read(({ request, caller }) => {
        const q = requestUrl(request).searchParams;
        const w = readWindow({ from: q.get("from") ?? undefined, to: q.get("to") ?? undefined }, "server", false);
        return alerts.history(tenantOf(caller), q.get("rule_id") ?? undefined, w.fromMs, w.toMs);
      }),
    );
}
