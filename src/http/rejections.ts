// rejections: GET /ingest/rejections, the last entries the shipper routes refused for the key's workspace environment (contract §11).
import { Type as T } from "@sinclair/typebox";
import { Elysia } from "elysia";
import type { RejectionLog } from "../ingest/rejections.ts";
import type { Gate } from "./guard.ts";
import { operation } from "./openapi.ts";
import { json } from "./respond.ts";

const RejectedEntry = T.Object({
  at: T.String({ format: "date-time" }),
  protocol: T.Union([T.Literal("otlp"), T.Literal("loki"), T.Literal("es"), T.Literal("syslog")]),
  reason: T.String(),
  field: T.String(),
  sample: T.String({ description: "the first 1,000 characters of the entry as received" }),
});

/** rejectionRoutes mounts GET /ingest/rejections under the workspace prefix. */
export function rejectionRoutes(gate: Gate, rejections: RejectionLog) {
  return new Elysia().get(
    "/ingest/rejections",
    gate.guarded("logs:read", ({ caller, set }) => json(set, rejections.list(caller.workspace.id, caller.key.environment))),
    {
      detail: operation({
        summary: "The last 100 entries the shipper routes rejected",
        description: "Newest first, for this key's workspace and environment: OTLP, Loki, Elasticsearch bulk and syslog entries that failed an entry rule.",
        permission: "logs:read",
        responses: { 200: { description: "rejected entries", schema: T.Array(RejectedEntry) } },
        errors: [401, 403, 429, 500],
      }),
    },
  );
}
