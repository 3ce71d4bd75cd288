// explore-schema: the request and answer shapes of the exploring endpoints (contract §10), for the OpenAPI document.
import { Type as T } from "@sinclair/typebox";
import { LogEntry } from "../schema.ts";

const DateTime = T.String({ format: "date-time" });
const Query = T.Optional(T.Union([T.String({ maxLength: 2000 }), T.Null()], { description: "query-language expression (contract §6)" }));
const Axis = T.Optional(
  T.Union([T.Literal("server"), T.Literal("client"), T.Null()], { description: "the timestamp from, to and buckets use (default server)" }),
);
const Field = T.String({ description: "level, action, tag, environment or an object path such as metadata.status" });

export const HitsRequest = T.Object(
  {
    query: Query,
    from: DateTime,
    to: DateTime,
    step: T.Optional(T.Union([T.String({ pattern: "^[0-9]+(ms|s|m|h|d)$", description: "bucket width, e.g. 5m; default: ≤ 120 buckets" }), T.Null()])),
    groupBy: T.Optional(T.Union([Field, T.Null()])),
    limit: T.Optional(T.Union([T.Integer({ minimum: 1, maximum: 100, default: 10, description: "groups kept; the rest are summed into other" }), T.Null()])),
    axis: Axis,
  },
  { $id: "HitsRequest" },
);

const Counts = T.Array(T.Integer());
export const HitsResponse = T.Object({
  from: DateTime,
  to: DateTime,
  step_ms: T.Integer(),
  axis: T.Union([T.Literal("server"), T.Literal("client")]),
  buckets: T.Array(DateTime, { description: "each bucket's start" }),
  total: T.Integer(),
  series: T.Array(
    T.Object({
      group: T.Union([T.Record(T.String(), T.Union([T.String(), T.Null()])), T.Null()], {
        description: '{"<field>": text form or null}; null without groupBy',
      }),
      counts: Counts,
      total: T.Integer(),
    }),
  ),
  other: T.Union([T.Object({ counts: Counts, total: T.Integer() }), T.Null()]),
});

export const FacetsRequest = T.Object(
  {
    query: Query,
    from: T.Optional(T.Union([DateTime, T.Null()])),
    to: T.Optional(T.Union([DateTime, T.Null()])),
    fields: T.Optional(T.Union([T.Array(Field, { minItems: 1, maxItems: 20, default: ["level", "action", "tag"] }), T.Null()])),
    limit: T.Optional(T.Union([T.Integer({ minimum: 1, maximum: 100, default: 10 }), T.Null()])),
    axis: Axis,
  },
  { $id: "FacetsRequest" },
);

export const FacetsResponse = T.Object({
  total: T.Integer(),
  facets: T.Array(
    T.Object({
      field: T.String(),
      values: T.Array(T.Object({ value: T.String(), count: T.Integer() })),
      other: T.Integer(),
      missing: T.Integer(),
      distinct: T.Union([T.Integer(), T.Null()]),
      too_many: T.Boolean({ description: "more than 100,000 distinct values: values are left empty and distinct null" }),
    }),
  ),
});

export const FieldsRequest = T.Object(
  {
    query: Query,
    from: T.Optional(T.Union([DateTime, T.Null()])),
    to: T.Optional(T.Union([DateTime, T.Null()])),
    prefix: T.Optional(T.Union([T.String({ description: "only paths starting with this" }), T.Null()])),
    axis: Axis,
  },
  { $id: "FieldsRequest" },
);

export const FieldsResponse = T.Object({
  fields: T.Array(T.Object({ field: T.String(), count: T.Integer(), types: T.Array(T.String()) })),
  scanned: T.Integer({ description: "matching entries read, newest first, at most 100,000" }),
  complete: T.Boolean({ description: "every matching entry was read" }),
});

/** ContextQuery describes the parameters; they are checked by the handler (a 400 naming the field), so every value passes the schema. */
export const ContextQuery = T.Object(
  {
    before: T.Optional(T.String({ description: "older matching entries, 0–100 (default 20)" })),
    after: T.Optional(T.String({ description: "newer matching entries, 0–100 (default 20)" })),
    query: T.Optional(T.String({ description: "only entries matching this query (the entry itself is always returned)" })),
  },
  { additionalProperties: true },
);

export const ContextResponse = T.Object({
  after: T.Array(LogEntry, { description: "newer entries, newest first" }),
  entry: LogEntry,
  before: T.Array(LogEntry, { description: "older entries, newest first" }),
});

export const TailQuery = T.Object({
  query: T.Optional(T.String({ description: "only entries matching this query" })),
  backfill: T.Optional(T.Integer({ minimum: 0, maximum: 1000, default: 0, description: "first send this many of the newest matching entries" })),
  after: T.Optional(T.String({ description: "resume after this cursor (<server_timestamp>_<id>); the Last-Event-ID header does the same" })),
});
