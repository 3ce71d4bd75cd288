// es: the Elasticsearch bulk API, POST /es/_bulk and /es/<index>/_bulk, and GET /es/ (contract §11), so that
// Elasticsearch clients, Filebeat-style shippers and syslog-ng's elasticsearch-http() can send to Sluice.
import { Elysia } from "elysia";
import { json } from "./respond.ts";
import { ship, shipperRoute, type ShipperDeps } from "./shipper.ts";

const PRODUCT = { "x-elastic-product": "Elasticsearch" };

/** INFO is the version 8 info document ES clients read before they send (their product check). */
const INFO = {
  name: "sluice",
  cluster_name: "sluice",
  cluster_uuid: "sluice",
  version: {
    number: "8.17.0",
    build_flavor: "default",
    build_type: "sluice",
    build_hash: "sluice",
    build_date: "2026-01-01T00:00:00.000Z",
    build_snapshot: false,
    lucene_version: "9.12.0",
    minimum_wire_compatibility_version: "7.17.0",
    minimum_index_compatibility_version: "7.0.0",
  },
  tagline: "You Know, for Search",
};

/** esRoutes mounts the bulk endpoints and the info document; every answer carries X-Elastic-Product. */
export function esRoutes(deps: ShipperDeps) {
  const info = shipperRoute(deps, "es", async ({ set }) => json(set, INFO), PRODUCT);
  const bulk = shipperRoute(
    deps,
    "es",
    async (call) => {
      const started = performance.now();
      const index = call.params?.index;
      const result = await ship(deps, call, { protocol: "es", index, json: true });
      const rejected = new Map(result.rejected.map((r) => [r.index, r]));
      let stored = 0;
      const items = (result.ops ?? []).map(({ op, index: name }, i) => {
        const r = rejected.get(i);
        if (r) return { [op]: { _index: name, status: 400, error: { type: "document_parsing_exception", reason: r.reason } } };
        return { [op]: { _index: name, _id: result.ids[stored++], _version: 1, result: "created", status: 201 } };
      });
      return json(call.set, { took: Math.round(performance.now() - started), errors: rejected.size > 0, items });
    },
    PRODUCT,
  );
  const hidden = { parse: "none" as const, detail: { hide: true } };
  return new Elysia()
    .get("/es", info, hidden)
    .get("/es/", info, hidden)
    .post("/es/_bulk", bulk, hidden)
    .put("/es/_bulk", bulk, hidden)
    .post("/es/:index/_bulk", bulk, hidden)
    .put("/es/:index/_bulk", bulk, hidden);
}
