// ui routes: the web explorer (contract §12). GET / redirects to /ui; /ui is the page, /ui/assets/ its script and style;
// POST /ui/session signs in with a key (an HttpOnly, SameSite=Strict cookie; Secure behind HTTPS) and DELETE signs out.
import { Elysia } from "elysia";
import { type Authenticator, requirePermission } from "../auth/authenticate.ts";
import { hashSecret } from "../auth/keys.ts";
import { SESSION_COOKIE, SESSION_MAX_MS, type Sessions, sessionToken } from "../auth/sessions.ts";
import { badRequest, notFound } from "../errors.ts";
import { readJson } from "./body.ts";
import { json } from "./respond.ts";
import { uiBundle } from "./ui-assets.ts";
import type { UiFile } from "./ui-bundle.ts";

/** CSP of every explorer page: only the server's own scripts and styles, answers only from the server itself. */
export const UI_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const PAGE_HEADERS = {
  "content-security-policy": UI_CSP,
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "x-frame-options": "DENY",
  "cross-origin-opener-policy": "same-origin",
};

/** isHttps tells whether the browser reached us over HTTPS, directly or through a proxy that says so. */
function isHttps(request: Request): boolean {
  if (request.url.startsWith("https:")) return true;
  const proto = request.headers.get("x-forwarded-proto");
  return proto !== null && proto.split(",")[0].trim().toLowerCase() === "https";
}

/** sessionCookie is the Set-Cookie value that holds a token (or clears it with maxAgeS 0). */
function sessionCookie(request: Request, token: string, maxAgeS: number): string {
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${isHttps(request) ? "; Secure" : ""}`;
}

/** serve answers a static file, gzipped when the browser takes it. */
function serve(request: Request, file: UiFile, cache: string): Response {
  const gzip = /\bgzip\b/.test(request.headers.get("accept-encoding") ?? "");
  const headers: Record<string, string> = { ...PAGE_HEADERS, "content-type": file.type, "cache-control": cache, vary: "accept-encoding" };
  if (gzip) headers["content-encoding"] = "gzip";
  return new Response(gzip ? file.gzip : file.body, { headers });
}

/** uiRoutes mounts the explorer: its page, files, sign-in and sign-out. */
export function uiRoutes(auth: Authenticator, sessions: Sessions, clock: () => number) {
  return new Elysia()
    .get("/", () => new Response(null, { status: 302, headers: { location: "/ui" } }), { detail: { hide: true } })
    .get("/ui", async ({ request }) => serve(request, (await uiBundle()).page, "no-store"), { detail: { hide: true } })
    .get(
      "/ui/assets/:name",
      async ({ request, params }) => {
        const file = (await uiBundle()).assets[params.name];
        if (!file) throw notFound("VALIDATION_INVALID_REQUEST", `no explorer file ${JSON.stringify(params.name)}; reload /ui`);
        return serve(request, file, "public, max-age=31536000, immutable"); // the name holds the content's hash
      },
      { detail: { hide: true } },
    )
    .post(
      "/ui/session",
      async ({ request, set }) => {
        const body = await readJson(request, { bytes: 4096, depth: 2 });
        const key = (body as { key?: unknown } | null)?.key;
        if (typeof key !== "string" || key.trim() === "") throw badRequest("VALIDATION_FAILED", 'send the API key as {"key": "sl_…"}', { field: "key" });
        const now = clock();
        const caller = auth.authenticate(new Headers({ "x-api-key": key.trim() }), now);
        requirePermission(caller, "logs:read");
        const token = await sessions.start(hashSecret(key.trim()), now);
        return json(set, { workspace: { id: caller.workspace.id, name: caller.workspace.name }, environment: caller.key.environment }, 200, {
          "set-cookie": sessionCookie(request, token, Math.floor(SESSION_MAX_MS / 1000)),
          "cache-control": "no-store",
        });
      },
      { parse: "none", detail: { hide: true } },
    )
    .delete(
      "/ui/session",
      async ({ request }) => {
        const token = sessionToken(request.headers);
        if (token !== undefined) await sessions.end(token); // answered once ended on every node of a cluster
        return new Response(null, { status: 204, headers: { "set-cookie": sessionCookie(request, "", 0), "cache-control": "no-store" } });
      },
      { detail: { hide: true } },
    );
}
