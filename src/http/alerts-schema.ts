// alerts-schema: the request and answer shapes of the alert endpoints (contract §16), for the OpenAPI document.
// The handlers check every field themselves, naming the bad one (alerts/rules.ts, channels.ts, silences.ts).
import { Type as T } from "@sinclair/typebox";

const DateTime = T.String({ format: "date-time" });
const Duration = (description: string) => T.String({ pattern: "^[0-9]+(ms|s|m|h|d)$", description });
const Group = T.Union([T.Record(T.String(), T.Union([T.String(), T.Null()])), T.Null()], {
  description: '{"<group_by field>": text form or null}; null without group_by',
});
const Strings = T.Record(T.String(), T.String());

const ChannelFields = {
  name: T.String({ minLength: 1, maxLength: 200 }),
  type: T.Union([T.Literal("webhook"), T.Literal("slack"), T.Literal("email"), T.Literal("alertmanager")]),
  config: T.Record(T.String(), T.Unknown(), {
    description:
      "webhook {url, headers?, secret?}; slack {url}; email {to: [...], from, smtp: {host, port, secure?, user?, pass?}}; alertmanager {url}. Secrets are write-only: answers show ***",
  }),
};
export const ChannelRequest = T.Object(ChannelFields, { $id: "AlertChannelRequest" });
export const ChannelPatch = T.Partial(T.Object(ChannelFields), { $id: "AlertChannelPatch" });
export const Channel = T.Object({ id: T.String(), ...ChannelFields, created_at: DateTime, updated_at: DateTime }, { $id: "AlertChannel" });
export const ChannelTest = T.Object({ delivered: T.Boolean(), status: T.Union([T.Integer(), T.Null()]), attempts: T.Integer(), error: T.Optional(T.String()) });

const RuleFields = {
  name: T.String({ minLength: 1, maxLength: 200 }),
  query: T.String({ description: "query-language expression (contract §6)" }),
  group_by: T.Array(T.String(), { maxItems: 3, description: "fields as /logs/hits groupBy (default [])" }),
  aggregate: T.Object({
    fn: T.Union(
      ["count", "count_distinct", "sum", "avg", "min", "max", "p50", "p90", "p95", "p99"].map((f) => T.Literal(f)),
      { description: "default count" },
    ),
    field: T.Optional(T.Union([T.String(), T.Null()])),
  }),
  condition: T.Object({ op: T.Union([">", ">=", "<", "<=", "==", "!="].map((o) => T.Literal(o))), threshold: T.Number() }),
  window: Duration("the window read at each evaluation, at most 7d"),
  every: Duration("evaluations at t = k·every since the epoch; at least SLUICE_ALERT_MIN_EVERY (10s)"),
  for: Duration("how long the condition must hold before firing (default 0s)"),
  axis: T.Union([T.Literal("server"), T.Literal("client")], { description: "default server" }),
  delay: Duration("the window ends this long before t (default 0s)"),
  labels: Strings,
  annotations: Strings,
  channels: T.Array(T.String(), { description: "channel ids" }),
  repeat_interval: Duration("a firing notice again after this while still firing (default 4h)"),
  notify_resolved: T.Boolean({ description: "default true" }),
  samples: T.Integer({ minimum: 0, maximum: 20, description: "matching entries in each notice (default 5)" }),
  enabled: T.Boolean({ description: "default true" }),
};
const required = ["name", "query", "condition", "window", "every"] as const;
export const RuleRequest = T.Composite([T.Pick(T.Object(RuleFields), required), T.Partial(T.Omit(T.Object(RuleFields), required))], {
  $id: "AlertRuleRequest",
});
export const RulePatch = T.Partial(T.Object(RuleFields), { $id: "AlertRulePatch" });
export const Rule = T.Object({ id: T.String(), ...RuleFields, created_at: DateTime, updated_at: DateTime }, { $id: "AlertRule" });

export const SilenceRequest = T.Object(
  {
    rule_id: T.Optional(T.String({ description: "absent: every rule" })),
    match: T.Optional(T.Record(T.String(), T.Union([T.String(), T.Null()]), { description: "group_by fields and their values" })),
    starts_at: DateTime,
    ends_at: DateTime,
    comment: T.String(),
  },
  { $id: "AlertSilenceRequest" },
);
export const Silence = T.Object({
  id: T.String(),
  rule_id: T.Union([T.String(), T.Null()]),
  match: T.Record(T.String(), T.Unknown()),
  starts_at: DateTime,
  ends_at: DateTime,
  comment: T.String(),
  created_at: DateTime,
});

export const Instance = T.Object({
  rule_id: T.String(),
  group: Group,
  fingerprint: T.String(),
  state: T.Union([T.Literal("pending"), T.Literal("firing"), T.Literal("error")]),
  value: T.Union([T.Number(), T.Null()]),
  active_since: DateTime,
  last_evaluated_at: DateTime,
  reason: T.Optional(T.String({ description: "why a rule is in state error" })),
});

export const Transition = T.Object({
  at: DateTime,
  rule_id: T.String(),
  group: Group,
  fingerprint: T.String(),
  from_state: T.String(),
  to_state: T.String({ description: "a resolve is inactive; a repeated firing notice is firing → firing" }),
  value: T.Union([T.Number(), T.Null()]),
  deliveries: T.Array(
    T.Object({
      channel_id: T.String(),
      status: T.Union([T.Literal("delivered"), T.Literal("failed"), T.Literal("pending")]),
      attempts: T.Integer(),
      error: T.Union([T.String(), T.Null()]),
    }),
  ),
});

export const HistoryQuery = T.Object({
  rule_id: T.Optional(T.String()),
  from: T.Optional(T.String({ format: "date-time", description: "inclusive" })),
  to: T.Optional(T.String({ format: "date-time", description: "exclusive" })),
});

export const PreviewRequest = T.Object({ rule: RuleRequest, from: DateTime, to: DateTime }, { $id: "AlertPreviewRequest" });
export const Preview = T.Object({
  evaluations: T.Array(
    T.Object({
      at: DateTime,
      groups: T.Array(T.Object({ group: Group, value: T.Union([T.Number(), T.Null()]), state: T.String() })),
      error: T.Optional(T.String()),
    }),
  ),
  incidents: T.Array(T.Object({ group: Group, started_at: DateTime, resolved_at: T.Union([DateTime, T.Null()]), peak: T.Union([T.Number(), T.Null()]) })),
});
