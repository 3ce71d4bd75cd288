// rules: an alert rule as contract §16 has it, checked field by field (400 VALIDATION_FAILED naming the field) and
// answered with every default filled in. A bad `query` is reported with the section 6 errors.
import { validationFailed, type FieldError } from "../errors.ts";
import type { Axis } from "../query/explore-request.ts";
import { parseGroupField } from "../query/group-field.ts";
import { parseQuery } from "../query/parser.ts";

export const AGGREGATES = ["count", "count_distinct", "sum", "avg", "min", "max", "p50", "p90", "p95", "p99"] as const;
export type AggregateFn = (typeof AGGREGATES)[number];
export const OPS = [">", ">=", "<", "<=", "==", "!="] as const;
export type Op = (typeof OPS)[number];
export const MAX_RULES = 100;
export const MAX_WINDOW_MS = 7 * 86_400_000;
export const MAX_SAMPLES = 20;

/** Rule is a stored alert rule, every default filled in. */
export interface Rule {
  id: string;
  name: string;
  query: string;
  group_by: string[];
  aggregate: { fn: AggregateFn; field: string | null };
  condition: { op: Op; threshold: number };
  window: string;
  every: string;
  for: string;
  axis: Axis;
  delay: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  channels: string[];
  repeat_interval: string;
  notify_resolved: boolean;
  samples: number;
  enabled: boolean;
  created_at: string;
  updated_at: string;
}

const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** durationMs reads a section 10 step (`<integer><unit>`, unit ms s m h d); undefined when it is not one. */
export function durationMs(text: unknown): number | undefined {
  const m = typeof text === "string" ? /^([0-9]{1,15})(ms|s|m|h|d)$/.exec(text) : null;
  return m ? Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS] : undefined;
}

/** RuleLimits are the bounds a server applies: the smallest `every` (SLUICE_ALERT_MIN_EVERY) and the channels that exist. */
export interface RuleLimits {
  minEveryMs: number;
  channelExists(id: string): boolean;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * checkRule merges `patch` onto `base` (a stored rule, or the defaults for a new one) and checks the result; it
 * throws the section 6 error of a bad query, else 400 VALIDATION_FAILED listing every bad field.
 */
export function checkRule(patch: Record<string, unknown>, base: Partial<Rule>, limits: RuleLimits): Omit<Rule, "id" | "created_at" | "updated_at"> {
  const errors: FieldError[] = [];
  const bad = (field: string, message: string) => errors.push({ field, message, log_index: null });
  const v = { ...DEFAULTS, ...base, ...patch } as Record<string, unknown>;
  if (typeof v.name !== "string" || v.name.trim().length === 0 || v.name.length > 200) bad("name", "name must be a string of 1 to 200 characters");
  if (typeof v.query !== "string") bad("query", 'query must be a string in the query language, e.g. "level=error"');
  else parseQuery(v.query); // its faults are the section 6 errors
  const groupBy = v.group_by;
  if (!Array.isArray(groupBy) || groupBy.length > 3)
    bad("group_by", "group_by must be an array of at most 3 fields such as level, action, tag or metadata.status");
  else
    groupBy.forEach((f, i) => {
      try {
        parseGroupField(f, `group_by.${i}`);
      } catch {
        bad(`group_by.${i}`, `${JSON.stringify(f)} is not a field to group by: use level, action, tag, environment or an object path such as metadata.status`);
      }
    });
  const agg = v.aggregate;
  let aggregate: Rule["aggregate"] = { fn: "count", field: null };
  if (!isObject(agg)) bad("aggregate", 'aggregate must be an object such as {"fn": "count"}');
  else {
    const fn = agg.fn ?? "count";
    if (!(AGGREGATES as readonly unknown[]).includes(fn)) bad("aggregate.fn", `aggregate.fn must be one of ${AGGREGATES.join(", ")}`);
    const field = agg.field ?? null;
    if (fn !== "count" && (typeof field !== "string" || !fieldOk(field)))
      bad(
        "aggregate.field",
        `aggregate ${String(fn)} needs a field: an object path such as metadata.duration_ms${fn === "count_distinct" ? ", or level, action or tag" : ""}`,
      );
    else if (fn !== "count_distinct" && fn !== "count" && typeof field === "string" && !field.includes("."))
      bad("aggregate.field", `aggregate ${String(fn)} takes number values: name an object path such as metadata.duration_ms`);
    aggregate = { fn: fn as AggregateFn, field: fn === "count" ? null : (field as string) };
  }
  const cond = v.condition;
  if (!isObject(cond)) bad("condition", 'condition is required: {"op": ">", "threshold": 10}');
  else {
    if (!(OPS as readonly unknown[]).includes(cond.op)) bad("condition.op", `condition.op must be one of ${OPS.join(" ")}`);
    if (typeof cond.threshold !== "number" || !Number.isFinite(cond.threshold)) bad("condition.threshold", "condition.threshold must be a number");
  }
  const windowMs = durationMs(v.window);
  if (!windowMs) bad("window", 'window is required: a duration above 0 such as "5m" (units ms, s, m, h, d)');
  else if (windowMs > MAX_WINDOW_MS) bad("window", "window must be at most 7d");
  const everyMs = durationMs(v.every);
  if (everyMs === undefined) bad("every", 'every is required: a duration such as "1m" (units ms, s, m, h, d)');
  else if (everyMs < limits.minEveryMs) bad("every", `every must be at least ${limits.minEveryMs / 1000}s (SLUICE_ALERT_MIN_EVERY)`);
  for (const name of ["for", "delay", "repeat_interval"])
    if (durationMs(v[name]) === undefined) bad(name, `${name} must be a duration such as "0s" or "5m" (units ms, s, m, h, d)`);
  if (v.axis !== "server" && v.axis !== "client") bad("axis", 'axis must be "server" or "client"');
  for (const name of ["labels", "annotations"]) {
    const o = v[name];
    if (!isObject(o) || Object.values(o).some((x) => typeof x !== "string")) bad(name, `${name} must be an object of string values`);
  }
  const channels = v.channels;
  if (!Array.isArray(channels) || channels.some((c) => typeof c !== "string")) bad("channels", "channels must be an array of channel ids");
  else
    channels.forEach((c, i) => {
      if (!limits.channelExists(c)) bad(`channels.${i}`, `no channel ${JSON.stringify(c)}: create it under /alerts/channels first`);
    });
  if (typeof v.notify_resolved !== "boolean") bad("notify_resolved", "notify_resolved must be true or false");
  if (typeof v.enabled !== "boolean") bad("enabled", "enabled must be true or false");
  if (typeof v.samples !== "number" || !Number.isInteger(v.samples) || v.samples < 0 || v.samples > MAX_SAMPLES)
    bad("samples", `samples must be a whole number from 0 to ${MAX_SAMPLES}`);
  if (errors.length) throw validationFailed(errors);
  return {
    name: v.name as string,
    query: v.query as string,
    group_by: groupBy as string[],
    aggregate,
    condition: { op: (cond as Record<string, unknown>).op as Op, threshold: (cond as Record<string, unknown>).threshold as number },
    window: v.window as string,
    every: v.every as string,
    for: v.for as string,
    axis: v.axis as Axis,
    delay: v.delay as string,
    labels: v.labels as Record<string, string>,
    annotations: v.annotations as Record<string, string>,
    channels: channels as string[],
    repeat_interval: v.repeat_interval as string,
    notify_resolved: v.notify_resolved as boolean,
    samples: v.samples as number,
    enabled: v.enabled as boolean,
  };
}

function fieldOk(field: string): boolean {
  try {
    parseGroupField(field, "aggregate.field");
    return true;
  } catch {
    return false;
  }
}

const DEFAULTS = {
  group_by: [],
  aggregate: { fn: "count" },
  for: "0s",
  axis: "server",
  delay: "0s",
  labels: {},
  annotations: {},
  channels: [],
  repeat_interval: "4h",
  notify_resolved: true,
  samples: 5,
  enabled: true,
};

/** holds tells whether a value meets a rule's condition. */
export function holds(op: Op, value: number, threshold: number): boolean {
  switch (op) {
    case ">":
      return value > threshold;
    case ">=":
      return value >= threshold;
    case "<":
      return value < threshold;
    case "<=":
      return value <= threshold;
    case "==":
      return value === threshold;
    case "!=":
      return value !== threshold;
  }
}
