// loki: POST /loki/api/v1/push, Grafana Loki's push API in JSON or snappy-compressed protobuf (contract §11).
import { Elysia } from "elysia";
import { badRequest } from "../errors.ts";
import { ship, shipperRoute, type ShipperDeps } from "./shipper.ts";

const PROTOBUF = /^application\/(x-)?protobuf\b/i;
const JSON_TYPE = /^application\/json\b/i;

/** lokiRoutes mounts the Loki push endpoint: 204 when all is stored, else 400 naming each rejected entry (the rest stored). */
export function lokiRoutes(deps: ShipperDeps) {
  return new Elysia().post(
    "/loki/api/v1/push",
    shipperRoute(deps, "loki", async (call) => {
      const type = call.request.headers.get("content-type")?.trim() ?? "";
      const json = JSON_TYPE.test(type);
      if (!json && !PROTOBUF.test(type)) {
        throw badRequest(
          "VALIDATION_INVALID_CONTENT_TYPE",
          `send Loki pushes as application/json or snappy-compressed application/x-protobuf (got ${JSON.stringify(type)})`,
        );
      }
      const result = await ship(deps, call, { protocol: "loki", json, snappy: !json });
      if (result.rejected.length === 0) {
        call.set.status = 204;
        return "";
      }
      call.set.status = 400;
      call.set.headers["content-type"] = "text/plain; charset=utf-8";
      const lines = result.rejected.map((r) => `entry ${r.index} rejected: ${r.reason}`);
      return `${result.rejected.length} of ${result.total} entries rejected, the other ${result.count} stored\n${lines.join("\n")}\n`;
    }),
    { parse: "none", detail: { hide: true } },
  );
}
