// ingest routes: POST /logs, POST /logs/bulk, POST /logs/validate (contract §4).
import { Elysia } from "elysia";
import type { IngestService } from "../ingest/ingest.ts";
import { maxBodyBytes, type Plan } from "../limits/plans.ts";
import { BulkCreated, CreateLogRequest, LogEntry, ValidationResponse } from "../schema.ts";
import { Type as T } from "@sinclair/typebox";
import { isNdjson, readJson, readJsonBody, readNdjsonBody } from "./body.ts";
import { parseJson } from "../ingest/json.ts";
import type { Metrics } from "./observe.ts";
import type { Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { json } from "./respond.ts";
import { toLogEntry } from "./wire.ts";

/**
 * entryBodyLimits bound write bodies. The depth guard only stops abuse (a bomb of brackets): it sits well
 * above the plan's depth (array + entry + object), so an entry nested a little too deep still gets its own
 * per-entry error, as /logs/validate and bulk writes must report.
 */
const entryBodyLimits = (plan: Plan) => ({
  bytes: maxBodyBytes(plan),
  depth: plan.max_metadata_depth < 0 ? 1000 : Math.max(64, plan.max_metadata_depth + 2),
});

/** ingestRoutes mounts the three write endpoints under the workspace prefix. */
export function ingestRoutes(gate: Gate, ingest: IngestService, metrics: Metrics) {
  return new Elysia()
    .post(
      "/logs",
      gate.guarded("logs:write", async ({ request, caller, set }) => {
        const body = await readJsonBody(request, { ...entryBodyLimits(caller.plan), timeoutMs: gate.bodyTimeoutMs });
        const row = await ingest.createOne(parseJson(body.bytes), caller, body.bounds);
        metrics.entries.inc(1);
        return json(set, toLogEntry(caller.key.environment, row.serverMs, row.entry), 201);
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Create one log entry",
          description: "Answers 201 with the stored entry once it is committed.",
          permission: "logs:write",
          body: CreateLogRequest,
          responses: { 201: { description: "the stored entry", schema: LogEntry } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .post(
      "/logs/bulk",
      gate.guarded("logs:write", async ({ request, caller, set }) => {
        const limits = { ...entryBodyLimits(caller.plan), timeoutMs: gate.bodyTimeoutMs };
        const body = await (isNdjson(request) ? readNdjsonBody(request, limits) : readJsonBody(request, limits));
        const created = await ingest.createMany(body, caller);
        metrics.entries.inc(created.count);
        return json(set, created, 201);
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Create many log entries, all or nothing",
          description:
            "If any entry is invalid nothing is stored and details.errors lists every problem with its log_index. Also takes NDJSON (Content-Type: application/x-ndjson), one entry a line.",
          permission: "logs:write",
          body: T.Array(CreateLogRequest),
          responses: { 201: { description: "count and ids, in input order", schema: BulkCreated } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .post(
      "/logs/validate",
      gate.guarded(
        "logs:write",
        async ({ request, caller, set }) => {
          const body = await readJson(request, { ...entryBodyLimits(caller.plan), timeoutMs: gate.bodyTimeoutMs });
          return json(set, ingest.validate(body, caller));
        },
        "validate",
      ),
      {
        parse: "none",
        detail: operation({
          summary: "Check entries without storing them",
          description: "Runs every check of a write. Parseable JSON of the right shape always answers 200.",
          permission: "logs:write",
          body: T.Union([CreateLogRequest, T.Array(CreateLogRequest)]),
          responses: { 200: { description: "the verdict", schema: ValidationResponse } },
          errors: [400, 401, 429, 500],
        }),
      },
    );
}
