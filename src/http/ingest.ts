// ingest routes: POST /logs, POST /logs/bulk, POST /logs/validate (contract §4).
import { Elysia } from "elysia";
import type { IngestService } from "../ingest/ingest.ts";
import { maxBodyBytes } from "../limits/plans.ts";
import { BulkCreated, CreateLogRequest, LogEntry, ValidationResponse } from "../schema.ts";
import { Type as T } from "@sinclair/typebox";
import { readJson } from "./body.ts";
import type { Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { json } from "./respond.ts";

/** ingestRoutes mounts the three write endpoints under the workspace prefix. */
export function ingestRoutes(gate: Gate, ingest: IngestService) {
  return new Elysia()
    .post(
      "/logs",
      gate.guarded("logs:write", async ({ request, caller }) => {
        const body = await readJson(request, maxBodyBytes(caller.plan));
        return json(await ingest.createOne(body, caller), 201);
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
      gate.guarded("logs:write", async ({ request, caller }) => {
        const body = await readJson(request, maxBodyBytes(caller.plan));
        return json(await ingest.createMany(body, caller), 201);
      }),
      {
        parse: "none",
        detail: operation({
          summary: "Create many log entries, all or nothing",
          description: "If any entry is invalid nothing is stored and details.errors lists every problem with its log_index.",
          permission: "logs:write",
          body: T.Array(CreateLogRequest),
          responses: { 201: { description: "count and ids, in input order", schema: BulkCreated } },
          errors: [400, 401, 403, 429, 500],
        }),
      },
    )
    .post(
      "/logs/validate",
      gate.guarded("logs:write", async ({ request, caller }) => {
        const body = await readJson(request, maxBodyBytes(caller.plan));
        return json(ingest.validate(body, caller));
      }, "validate"),
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
