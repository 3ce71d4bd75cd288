// otlp: POST /otlp/v1/logs, OpenTelemetry's OTLP/HTTP log export in protobuf or JSON (contract §11), so that
// OTEL_EXPORTER_OTLP_ENDPOINT=http://<host>:<port>/otlp works.
import { Elysia } from "elysia";
import { badRequest } from "../errors.ts";
import { encodeOtlpResponse } from "../ingest/protocols/otlp.ts";
import { ship, shipperRoute, type ShipperDeps } from "./shipper.ts";

const PROTOBUF = /^application\/(x-)?protobuf\b/i;
const JSON_TYPE = /^application\/json\b/i;

/** otlpRoutes mounts the OTLP/HTTP logs endpoint. */
export function otlpRoutes(deps: ShipperDeps) {
  return new Elysia().post(
    "/otlp/v1/logs",
    shipperRoute(deps, "otlp", async (call) => {
      const type = call.request.headers.get("content-type")?.trim() ?? "";
      const json = JSON_TYPE.test(type);
      if (!json && !PROTOBUF.test(type)) {
        throw badRequest("VALIDATION_INVALID_CONTENT_TYPE", `send OTLP logs as application/x-protobuf or application/json (got ${JSON.stringify(type)})`);
      }
      const result = await ship(deps, call, { protocol: "otlp", json });
      const why = result.rejected
        .slice(0, 20)
        .map((r) => `record ${r.index}: ${r.reason}`)
        .join("; ");
      const more = result.rejected.length > 20 ? `; and ${result.rejected.length - 20} more` : "";
      call.set.status = 200;
      call.set.headers["content-type"] = json ? "application/json" : "application/x-protobuf";
      const body = encodeOtlpResponse(result.rejected.length, why + more, json);
      return typeof body === "string" ? body : new Response(body, { status: 200, headers: call.set.headers as Record<string, string> });
    }),
    { parse: "none", detail: { hide: true } },
  );
}
