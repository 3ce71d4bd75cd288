// health routes: /healthz and /livez (the process answers), /readyz (storage open and writable), /metrics (Prometheus).
import { Elysia } from "elysia";
import type { Databases } from "../storage/db.ts";
import type { Metrics } from "./observe.ts";
import { json, type Reply } from "./respond.ts";

const PROBE_EVERY_MS = 1000; // a readiness probe commits a write; at most one a second

/** healthRoutes mounts the unauthenticated health endpoints. */
export function healthRoutes(dbs: Databases, metrics: Metrics) {
  let lastProbe = 0;
  let ready = false;
  const probe = async () => {
    if (Date.now() - lastProbe < PROBE_EVERY_MS) return ready;
    lastProbe = Date.now();
    try {
      ready = await dbs.meta.put(["readyz"], lastProbe);
    } catch {
      ready = false;
    }
    return ready;
  };
  const ok = ({ set }: { set: Reply }) => json(set, { status: "ok" });
  const hidden = { detail: { hide: true } };
  return new Elysia()
    .get("/healthz", ok, hidden)
    .get("/livez", ok, hidden)
    .get(
      "/readyz",
      async ({ set }) => {
        if (dbs.disk.full()) return json(set, { status: "unavailable", reason: "storage_full" }, 503);
        return (await probe()) ? json(set, { status: "ok" }) : json(set, { status: "unavailable" }, 503);
      },
      hidden,
    )
    .get("/metrics", async () => new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } }), hidden);
}
