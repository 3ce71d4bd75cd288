// admin routes: /api/v1/admin with the admin bearer token (contract §2).
import { timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import type { AdminService } from "../admin/service.ts";
import { hashSecret } from "../auth/keys.ts";
import { unauthorized } from "../errors.ts";
import type { MetaStore } from "../storage/records/meta.ts";
import type { StorageReport } from "../storage/report.ts";
import { readJson } from "./body.ts";
import { json } from "./respond.ts";

const ADMIN_BODY_LIMIT = 64 * 1024;

/** adminCheck returns the check of the admin bearer token that every admin route makes first. */
export function adminCheck(meta: MetaStore, envToken: string | undefined) {
  return (request: Request) => {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.get("authorization") ?? "");
    if (!m) throw unauthorized("AUTH_MISSING_API_KEY", "send the admin token as Authorization: Bearer <token>");
    const expected = envToken !== undefined ? hashSecret(envToken) : meta.adminTokenHash();
    const given = hashSecret(m[1]);
    if (!expected || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) {
      throw unauthorized("AUTH_INVALID_API_KEY", "the admin token is not valid; use the one printed at first start or SLUICE_ADMIN_TOKEN");
    }
  };
}

/** adminRoutes mounts the admin API; API keys never work here, only the admin token. */
export function adminRoutes(admin: AdminService, meta: MetaStore, envToken: string | undefined, storage: () => StorageReport) {
  const check = adminCheck(meta, envToken);
  const body = (request: Request) => readJson(request, { bytes: ADMIN_BODY_LIMIT, depth: 8 });
  const hidden = { detail: { hide: true }, parse: "none" as const };
  // a path id with malformed percent-encoding arrives as null: no record has such an id
  type Params = { id?: string | null; keyId?: string | null };
  const id = (p: Params) => p.id ?? "";
  const keyId = (p: Params) => p.keyId ?? "";

  return new Elysia({ prefix: "/api/v1/admin" })
    .onBeforeHandle(({ request }) => check(request))
    .post("/workspaces", async ({ request, set }) => json(set, await admin.createWorkspace(await body(request)), 201), hidden)
    .get("/workspaces", ({ set }) => json(set, admin.listWorkspaces()), hidden)
    .get("/storage", ({ set }) => json(set, storage()), hidden)
    .get("/workspaces/:id", ({ params, set }) => json(set, admin.getWorkspace(id(params))), hidden)
    .patch("/workspaces/:id", async ({ request, params, set }) => json(set, await admin.updateWorkspace(id(params), await body(request))), hidden)
    .post("/workspaces/:id/keys", async ({ request, params, set }) => json(set, await admin.createKey(id(params), await body(request)), 201), hidden)
    .get("/workspaces/:id/keys", ({ params, set }) => json(set, admin.listKeys(id(params))), hidden)
    .post("/keys/:keyId/rotate", async ({ params, set }) => json(set, await admin.rotateKey(keyId(params)), 201), hidden)
    .delete(
      "/keys/:keyId",
      async ({ params }) => {
        await admin.revokeKey(keyId(params));
        return new Response(null, { status: 204 });
      },
      hidden,
    );
}
