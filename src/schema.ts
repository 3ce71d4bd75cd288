// schema: TypeBox schemas of the wire types. Request checks compile these, and the OpenAPI document embeds them.
import { Type as T, type Static } from "@sinclair/typebox";

export const ENVIRONMENTS = ["development", "staging", "production"] as const;
export const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** KEY_TYPES are the kinds of API key: read-only, write-only, read-write. */
export const KEY_TYPES = ["ro", "wo", "rw"] as const;
export type KeyType = (typeof KEY_TYPES)[number];

/** isEnvironment tells whether a value names one of the three environments. */
export const isEnvironment = (v: unknown): v is Environment => typeof v === "string" && (ENVIRONMENTS as readonly string[]).includes(v);
export type Level = (typeof LEVELS)[number];

/** RFC 3339 date-time with a zone; calendar validity (Feb 30) is checked by time.parseRfc3339. */
export const RFC3339_PATTERN = "^\\d{4}-\\d{2}-\\d{2}[Tt]\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?([Zz]|[+-]\\d{2}:\\d{2})$";

// an open object: any keys; compiled without a per-key check (TypeBox's Record tests each key against a pattern)
const AnyObject = () => T.Object({}, { additionalProperties: true });
const FreeObject = (description: string) => T.Union([AnyObject(), T.Null()], { description });

export const CreateLogRequest = T.Object(
  {
    action: T.String({ minLength: 1, description: "Event name: 1–255 characters once trimmed of surrounding white space; stored as sent." }),
    level: T.Union(
      LEVELS.map((l) => T.Literal(l)),
      { description: "One of the six lowercase levels." },
    ),
    clientTimestamp: T.String({ pattern: RFC3339_PATTERN, description: "RFC 3339 date-time with a time zone (Z or ±hh:mm)." }),
    environment: T.Optional(
      T.Union([...ENVIRONMENTS.map((e) => T.Literal(e)), T.Null()], { description: "Defaults (also when null) to the key's environment; must equal it." }),
    ),
    message: T.Optional(T.Union([T.String(), T.Null()])),
    tags: T.Optional(
      T.Union([T.Array(T.String({ minLength: 1, maxLength: 64 })), T.Null()], {
        description: "Duplicates are removed (order kept); then at most the plan's max_tags.",
      }),
    ),
    actor: T.Optional(FreeObject("Who performed the action; nesting depth at most the plan's metadata depth.")),
    target: T.Optional(FreeObject("What the action concerned; nesting depth at most the plan's metadata depth.")),
    context: T.Optional(FreeObject("Request context; nesting depth at most the plan's metadata depth.")),
    metadata: T.Optional(FreeObject("Free-form structured data; nesting depth at most the plan's metadata depth.")),
  },
  { $id: "CreateLogRequest", description: "The UTF-8 size of the entry's JSON is at most the plan's max_log_size. Unknown fields are ignored." },
);
export type CreateLogRequest = Static<typeof CreateLogRequest>;

const NullableObject = T.Union([AnyObject(), T.Null()]);

export const LogEntry = T.Object(
  {
    id: T.String({ format: "uuid" }),
    environment: T.Union(ENVIRONMENTS.map((e) => T.Literal(e))),
    level: T.Union(LEVELS.map((l) => T.Literal(l))),
    action: T.String(),
    message: T.Union([T.String(), T.Null()]),
    tags: T.Array(T.String()),
    actor: NullableObject,
    target: NullableObject,
    context: NullableObject,
    metadata: NullableObject,
    client_timestamp: T.String({ format: "date-time" }),
    server_timestamp: T.String({ format: "date-time" }),
  },
  { $id: "LogEntry" },
);
export type LogEntry = Static<typeof LogEntry>;

export const BulkCreated = T.Object({ count: T.Integer(), ids: T.Array(T.String({ format: "uuid" })) }, { $id: "BulkCreated" });

export const ValidationError = T.Object({ field: T.String(), message: T.String(), log_index: T.Union([T.Integer(), T.Null()]) });
export const ValidationResponse = T.Object(
  { valid: T.Boolean(), warnings: T.Array(T.String()), errors: T.Array(ValidationError) },
  { $id: "ValidationResponse" },
);

export const ErrorResponse = T.Object(
  {
    error_code: T.String(),
    message: T.String(),
    request_id: T.String({ format: "uuid" }),
    details: T.Optional(T.Record(T.String(), T.Unknown())),
  },
  { $id: "ErrorResponse" },
);

const DateTime = T.String({ format: "date-time" });
const Cursor = {
  cursorID: T.Optional(T.String({ format: "uuid", description: "id of the last entry of the previous page (X-Next-Cursor-ID)" })),
  cursorTS: T.Optional(T.String({ format: "date-time", description: "server_timestamp of that entry (X-Next-Cursor-TS)" })),
  pageSize: T.Optional(T.Integer({ minimum: 10, maximum: 100, default: 50 })),
};

export const FindLogsQuery = T.Object({
  from: T.Optional(T.String({ format: "date-time", description: "inclusive, compares server_timestamp" })),
  to: T.Optional(T.String({ format: "date-time", description: "exclusive, compares server_timestamp" })),
  action: T.Optional(T.String({ description: "case-insensitive substring of action" })),
  message: T.Optional(T.String({ description: "case-insensitive substring of message" })),
  environments: T.Optional(T.String({ description: "comma-separated environments (only the key's own)" })),
  levels: T.Optional(T.String({ description: "comma-separated levels, any of them" })),
  tags: T.Optional(T.String({ description: "comma-separated tags, any of them" })),
  ...Cursor,
});

export const SearchLogsRequest = T.Object(
  {
    query: T.Optional(T.Union([T.String({ maxLength: 2000 }), T.Null()], { description: "query-language expression (contract §6)" })),
    from: T.Optional(T.Union([DateTime, T.Null()])),
    to: T.Optional(T.Union([DateTime, T.Null()])),
    action: T.Optional(T.Union([T.String(), T.Null()], { description: "case-insensitive substring of action" })),
    cursorID: T.Optional(T.Union([T.String({ format: "uuid" }), T.Null()])),
    cursorTS: T.Optional(T.Union([DateTime, T.Null()])),
    pageSize: T.Optional(T.Union([T.Integer({ minimum: 10, maximum: 100 }), T.Null()])),
    explain: T.Optional(T.Union([T.Boolean({ description: "answer with the query plan and its estimates instead of entries" }), T.Null()])),
  },
  { $id: "SearchLogsRequest" },
);

const PlanInfo = T.Object({
  code: T.String(),
  logs_per_month: T.Integer(),
  log_retention_days: T.Integer(),
  max_batch_size: T.Integer(),
  max_log_size: T.Integer(),
});
const UsageFields = {
  period_start: DateTime,
  period_end: DateTime,
  resets_at: DateTime,
};

export const UsageResponse = T.Object(
  { used: T.Integer(), limit: T.Integer(), remaining: T.Integer(), ...UsageFields, plan_code: T.String() },
  { $id: "UsageResponse" },
);

export const InfoResponse = T.Object(
  {
    organization: T.Object({ id: T.String(), name: T.String() }),
    project: T.Object({ id: T.String(), name: T.String() }),
    api_key: T.Object({ id: T.String(), name: T.String(), scopes: T.Array(T.String()), environment_scopes: T.Array(T.String()) }),
    plan: PlanInfo,
    usage: T.Object({ current_month_used: T.Integer(), current_month_limit: T.Integer(), current_month_remaining: T.Integer(), ...UsageFields }),
    ingestion: T.Object({ allowed_environments: T.Array(T.String()), default_environment: T.String() }),
  },
  { $id: "InfoResponse" },
);
