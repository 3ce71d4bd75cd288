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

/** AlertGate admits alert calls: the workspace gate (API keys), or the admin token on the admin API's paths. */
export type AlertGate = Pick<Gate, "guarded" | "bodyTimeoutMs">;
import { scopeOf } from "./read.ts";
import { json, requestUrl } from "./respond.ts";
import { operation } from "./openapi.ts";
import * as S from "./alerts-schema.ts";
import { Type as T, type TSchema } from "@sinclair/typebox";

const BODY_LIMIT = 256 * 1024;
const READ = "logs:read";
const WRITE = 'scope "*"';

/** docOf is a route's OpenAPI entry. */
function docOf(
  summary: string,
  permission: string,
  status: number,
  answer: TSchema | undefined,
  extra: { body?: TSchema; query?: typeof S.HistoryQuery; description?: string } = {},
) {
  const errors = [400, 401, 403, 404, 429, 500].filter((e) => e !== 400 || extra.body !== undefined || extra.query !== undefined || permission === WRITE);
  return {
    detail: operation({
      summary,
      permission,
      ...extra,
      responses: { [status]: { description: status === 204 ? "done" : summary, ...(answer ? { schema: answer } : {}) } },
      errors,
    }),
  };
}
type Id = { itemId: string };

/** mayWrite throws 403 unless the key has scope "*", which alert writes need. */
function mayWrite(caller: Caller): void {
  if (!caller.key.scopes.includes("*")) {
    throw forbidden("forbidden", `changing alerts needs a key with scope "*"; this key's scopes are ${caller.key.scopes.join(", ")}`);
  }
}

const tenantOf = (caller: Caller) => ({ ws: caller.workspace.id, env: caller.key.environment });

/** alertRoutes mounts the alert endpoints. */
export function alertRoutes(gate: AlertGate, alerts: AlertService, queryTimeoutMs: number, documented = true) {
  // the admin API's copy stays out of the workspace document, as every admin route does
  const doc = (...args: Parameters<typeof docOf>) => (documented ? docOf(...args) : { detail: { hide: true } });
  const body = async (request: Request, example: string) =>
    objectBody(await readJson(request, { bytes: BODY_LIMIT, depth: 8, timeoutMs: gate.bodyTimeoutMs }), example);
  // alert records are answered where the call arrives (a cluster node's mirror holds them all); only a preview reads
  // entries, on a copy of the caller's partition
  const read = <P>(handler: (call: Call<P>) => unknown, here = true) =>
    gate.guarded<P>("logs:read", async (call) => json(call.set, await handler(call)), "other", here);
  const write = <P>(status: number, handler: (call: Call<P>) => unknown) =>
    gate.guarded<P>(
      "logs:read",
      async (call) => {
        mayWrite(call.caller);
        const answer = await handler(call);
        if (status === 204) {
          call.set.status = 204;
          return "";
        }
        return json(call.set, answer, status);
      },
      "other",
      true,
    );
  const noParse = { parse: "none" as const };
  const body201 = (summary: string, b: TSchema, answer: TSchema) => ({ ...noParse, ...doc(summary, WRITE, 201, answer, { body: b }) });
  return new Elysia({ prefix: "/alerts" })
    .get(
      "/channels",
      read(({ caller }) => alerts.channels(tenantOf(caller))),
      doc("List alert channels", READ, 200, T.Array(S.Channel)),
    )
    .post(
      "/channels",
      write(201, async ({ request, caller, now }) =>
        alerts.createChannel(tenantOf(caller), await body(request, '{"name": "ops", "type": "webhook", "config": {"url": "https://…"}}'), now),
      ),
      body201("Create an alert channel", S.ChannelRequest, S.Channel),
    )
    .get(
      "/channels/:itemId",
      read<Id>(({ caller, params }) => shown(alerts.channel(tenantOf(caller), params.itemId))),
      doc("Get an alert channel", READ, 200, S.Channel),
    )
    .patch(
      "/channels/:itemId",
      write<Id>(200, async ({ request, caller, params, now }) =>
        alerts.updateChannel(tenantOf(caller), params.itemId, await body(request, '{"name": "ops"}'), now),
      ),
      { ...noParse, ...doc("Change an alert channel", WRITE, 200, S.Channel, { body: S.ChannelPatch }) },
    )
    .delete(
      "/channels/:itemId",
      write<Id>(204, ({ caller, params }) => alerts.deleteChannel(tenantOf(caller), params.itemId)),
      doc("Delete an alert channel", WRITE, 204, undefined),
    )
    .post(
      "/channels/:itemId/test",
      write<Id>(200, ({ caller, params, now }) => alerts.testChannel(tenantOf(caller), params.itemId, now)),
      { ...noParse, ...doc("Send a test notification through a channel now", WRITE, 200, S.ChannelTest) },
    )
    .get(
      "/rules",
      read(({ caller }) => alerts.rules(tenantOf(caller))),
      doc("List alert rules", READ, 200, T.Array(S.Rule)),
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
      body201("Create an alert rule (answered with every default filled in)", S.RuleRequest, S.Rule),
    )
    .post(
      "/rules/preview",
      read(async ({ request, caller, now }) => {
        const b = await body(request, '{"rule": {…}, "from": "2026-11-27T00:00:00Z", "to": "2026-11-27T12:00:00Z"}');
        const rule = objectBody(b.rule ?? null, '{"rule": {"name": "errors", "query": "level=error", …}}');
        const w = readWindow(b, "server", true);
        return alerts.preview(scopeOf(caller, now), rule, w.fromMs, w.toMs, queryTimeoutMs);
      }, false),
      {
        ...noParse,
        ...doc("Replay a rule over a past range: every evaluation and incident it would have made", READ, 200, S.Preview, { body: S.PreviewRequest }),
      },
    )
    .get(
      "/rules/:itemId",
      read<Id>(({ caller, params }) => alerts.rule(tenantOf(caller), params.itemId)),
      doc("Get an alert rule", READ, 200, S.Rule),
    )
    .patch(
      "/rules/:itemId",
      write<Id>(200, async ({ request, caller, params, now }) =>
        alerts.updateRule(tenantOf(caller), params.itemId, await body(request, '{"enabled": false}'), now),
      ),
      { ...noParse, ...doc("Change an alert rule", WRITE, 200, S.Rule, { body: S.RulePatch }) },
    )
    .delete(
      "/rules/:itemId",
      write<Id>(204, ({ caller, params }) => alerts.deleteRule(tenantOf(caller), params.itemId)),
      doc("Delete an alert rule and its states", WRITE, 204, undefined),
    )
    .get(
      "/silences",
      read(({ caller }) => alerts.silences(tenantOf(caller))),
      doc("List silences", READ, 200, T.Array(S.Silence)),
    )
    .post(
      "/silences",
      write(201, async ({ request, caller, now }) =>
        alerts.createSilence(tenantOf(caller), await body(request, '{"starts_at": "…", "ends_at": "…", "comment": "maintenance"}'), now),
      ),
      body201("Create a silence: notifications muted, states still change", S.SilenceRequest, S.Silence),
    )
    .delete(
      "/silences/:itemId",
      write<Id>(204, ({ caller, params }) => alerts.deleteSilence(tenantOf(caller), params.itemId)),
      doc("Delete a silence", WRITE, 204, undefined),
    )
    .get(
      "",
      read(({ caller }) => alerts.alerts(tenantOf(caller))),
      doc("List pending and firing alerts (and rules in state error)", READ, 200, T.Array(S.Instance)),
    )
    .get(
      "/history",
      read(({ request, caller }) => {
        const q = requestUrl(request).searchParams;
        const w = readWindow({ from: q.get("from") ?? undefined, to: q.get("to") ?? undefined }, "server", false);
        return alerts.history(tenantOf(caller), q.get("rule_id") ?? undefined, w.fromMs, w.toMs);
      }),
      doc("List state transitions with their deliveries", READ, 200, T.Array(S.Transition), { query: S.HistoryQuery }),
    );
}
