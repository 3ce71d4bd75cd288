// The web explorer's server side (contract §12), without a browser: GET / redirects, the page's CSP, the session
// cookie's flags, what the cookie authenticates (reads; a POST only with X-Sluice-UI: 1; never a write), sign-out,
// a revoked or expired key ending its session, and a session outliving a restart (sessions are stored, hashed).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { entry, removeDir, startTestSluice, type TestSluice, WS } from "../helpers/sluice.ts";

let t: TestSluice;
let wsId: string;
let ro: { id: string; key: string };
let rw: { id: string; key: string };
let now = Date.now();

beforeAll(async () => {
  t = startTestSluice(undefined, { clock: () => now, tail: { recheckMs: 50 } });
  const ws = await t.workspace();
  wsId = ws.id;
  ro = await t.svc.admin.createKey(wsId, { environment: "production", type: "ro" });
  rw = await t.svc.admin.createKey(wsId, { environment: "production", type: "rw" });
  expect((await t.call("POST", `${WS}/logs`, { key: rw.key, body: entry({ message: "hello" }) })).status).toBe(201);
});
afterAll(async () => {
  await t.close();
  removeDir(t.dir);
});

/** signIn posts a key to /ui/session and returns the answer and the cookie pair to send back. */
async function signIn(key: string, headers: Record<string, string> = {}) {
  const r = await t.call("POST", "/ui/session", { body: { key }, headers });
  const setCookie = r.headers.get("set-cookie") ?? "";
  return { r, setCookie, cookie: setCookie.split(";")[0] };
}

describe("the web explorer's routes", () => {
  test("GET / redirects to /ui", async () => {
    const r = await t.call("GET", "/");
    expect(r.status).toBe(302);
    expect(r.headers.get("location")).toBe("/ui");
  });

  test("every explorer page is served with a CSP that allows only the server's own scripts, and has no inline script", async () => {
    const page = await t.call("GET", "/ui");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toStartWith("text/html");
    const csp = page.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await page.text();
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBe(1);
    for (const [, attrs, body] of scripts) {
      expect(attrs).toMatch(/src="\/ui\/assets\/[^"]+\.js"/);
      expect(body.trim()).toBe("");
    }
    expect(html).not.toMatch(/\son[a-z]+=/i);
    // the files it loads: same policy, the right types, gzipped when asked
    for (const m of html.matchAll(/(?:src|href)="(\/ui\/assets\/[^"]+)"/g)) {
      const a = await t.call("GET", m[1], { headers: { "accept-encoding": "gzip" } });
      expect(a.status).toBe(200);
      expect(a.headers.get("content-security-policy")).toBe(csp);
      expect(a.headers.get("x-content-type-options")).toBe("nosniff");
      expect(a.headers.get("content-type")).toMatch(m[1].endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
    }
    expect((await t.call("GET", "/ui/assets/nothing.js")).status).toBe(404);
  });

  test("POST /ui/session with a logs:read key sets an HttpOnly, SameSite=Strict cookie that holds no part of the key", async () => {
    const { r, setCookie, cookie } = await signIn(ro.key);
    expect(r.status).toBe(200);
    expect(setCookie).toMatch(/^sluice_session=[A-Za-z0-9_-]{40,};/);
    expect(setCookie).toContain("HttpOnly");
    expect(setCookie).toContain("SameSite=Strict");
    expect(setCookie).toContain("Path=/");
    expect(setCookie).not.toContain("Secure"); // plain HTTP: a Secure cookie would never come back
    const token = cookie.slice(cookie.indexOf("=") + 1);
    expect(token).not.toContain(ro.key.slice(-12));
    expect(await r.text()).not.toContain(ro.key);
  });

  test("behind HTTPS (X-Forwarded-Proto: https) the session cookie is Secure", async () => {
    const { setCookie } = await signIn(ro.key, { "x-forwarded-proto": "https" });
    expect(setCookie).toContain("; Secure");
  });

  test("sign-in with an unknown key is 401 and with a key lacking logs:read 403, and neither sets a cookie", async () => {
    const bad = await signIn("sl_production_ro_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    expect(bad.r.status).toBe(401);
    expect(bad.setCookie).toBe("");
    const wo = await t.svc.admin.createKey(wsId, { environment: "production", type: "wo" });
    const denied = await signIn(wo.key);
    expect(denied.r.status).toBe(403);
    expect(denied.setCookie).toBe("");
    expect((await t.call("POST", "/ui/session", { body: { nokey: 1 } })).status).toBe(400);
    expect((await t.call("POST", "/ui/session", { raw: `key=${ro.key}`, headers: { "content-type": "application/x-www-form-urlencoded" } })).status).toBe(400);
  });

  test("any other sign-in body is a 400 or 401 that sets no cookie (fuzzed)", async () => {
    await fc.assert(
      fc.asyncProperty(fc.oneof(fc.json(), fc.string(), fc.record({ key: fc.oneof(fc.string(), fc.jsonValue()) })), async (body) => {
        const raw = typeof body === "string" ? body : JSON.stringify(body);
        const r = await t.call("POST", "/ui/session", { raw, headers: { "content-type": "application/json" } });
        expect([400, 401]).toContain(r.status);
        expect(r.headers.get("set-cookie")).toBeNull();
        expect(((await r.json()) as { error_code: string }).error_code).toMatch(/^(VALIDATION_|AUTH_)/);
      }),
      { numRuns: 300 },
    );
  });

  test("the cookie authenticates GET reads as the key would, and POST reads only with X-Sluice-UI: 1", async () => {
    const { cookie } = await signIn(ro.key);
    const info = await t.call("GET", `${WS}/info`, { headers: { cookie } });
    expect(info.status).toBe(200);
    expect(((await info.json()) as { project: { id: string } }).project.id).toBe(wsId);
    const list = await t.call("GET", `${WS}/logs`, { headers: { cookie } });
    expect(list.status).toBe(200);
    expect(((await list.json()) as { message: string }[]).map((e) => e.message)).toEqual(["hello"]);
    expect(list.headers.get("x-ratelimit-limit")).not.toBeNull();

    const withHeader = await t.call("POST", `${WS}/logs/query`, { body: { query: "hello" }, headers: { cookie, "x-sluice-ui": "1" } });
    expect(withHeader.status).toBe(200);
    expect(((await withHeader.json()) as unknown[]).length).toBe(1);
    const without = await t.call("POST", `${WS}/logs/query`, { body: { query: "hello" }, headers: { cookie } });
    expect(without.status).toBe(401);
    expect(((await without.json()) as { message: string }).message).toContain("X-Sluice-UI");
    const facets = await t.call("POST", `${WS}/logs/facets`, { body: {}, headers: { cookie, "x-sluice-ui": "1" } });
    expect(facets.status).toBe(200);
  });

  test("the cookie never authenticates a write, even with X-Sluice-UI: 1 and a read-write key", async () => {
    const { cookie } = await signIn(rw.key);
    const r = await t.call("POST", `${WS}/logs`, { body: entry(), headers: { cookie, "x-sluice-ui": "1" } });
    expect(r.status).toBe(401);
    const bulk = await t.call("POST", `${WS}/logs/bulk`, { body: [entry()], headers: { cookie, "x-sluice-ui": "1" } });
    expect(bulk.status).toBe(401);
  });

  test("sign-out ends the session and clears the cookie", async () => {
    const { cookie } = await signIn(ro.key);
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie } })).status).toBe(200);
    const out = await t.call("DELETE", "/ui/session", { headers: { cookie } });
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^sluice_session=; .*Max-Age=0/);
    const after = await t.call("GET", `${WS}/info`, { headers: { cookie } });
    expect(after.status).toBe(401);
    expect(((await after.json()) as { error_code: string }).error_code).toBe("AUTH_INVALID_API_KEY");
  });

  test("a revoked key ends its sessions at once, open live tails included", async () => {
    const k = await t.svc.admin.createKey(wsId, { environment: "production", type: "ro" });
    const { cookie } = await signIn(k.key);
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie } })).status).toBe(200);
    const tail = await t.call("GET", `${WS}/logs/tail`, { headers: { cookie } });
    expect(tail.status).toBe(200);
    await t.svc.admin.revokeKey(k.id);
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie } })).status).toBe(401);
    // the tail's stream ends: reading it to its end finishes well within the contract's 5 s
    const started = performance.now();
    await tail.text();
    expect(performance.now() - started).toBeLessThan(5000);
  });

  test("an expired key ends its session", async () => {
    const k = await t.svc.admin.createKey(wsId, { environment: "production", type: "ro", expires_at: new Date(now + 60_000).toISOString() });
    const { cookie } = await signIn(k.key);
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie } })).status).toBe(200);
    now += 120_000;
    const r = await t.call("GET", `${WS}/info`, { headers: { cookie } });
    expect(r.status).toBe(401);
    expect(((await r.json()) as { error_code: string }).error_code).toBe("AUTH_API_KEY_EXPIRED");
  });

  test("a session lasts at most 12 hours, and 2 hours without a request", async () => {
    const { cookie } = await signIn(ro.key);
    now += 100 * 60_000;
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie } })).status).toBe(200);
    now += 121 * 60_000;
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie } })).status).toBe(401);
    const busy = await signIn(ro.key);
    for (let h = 0; h < 12; h++) {
      now += 60 * 60_000;
      expect((await t.call("GET", `${WS}/info`, { headers: { cookie: busy.cookie } })).status).toBe(h < 11 ? 200 : 401);
    }
  });

  test("a session outlives a restart of the server (it is stored, hashed), and a sign-out before the restart holds after it", async () => {
    const kept = await signIn(ro.key);
    const ended = await signIn(ro.key);
    expect((await t.call("DELETE", "/ui/session", { headers: { cookie: ended.cookie } })).status).toBe(204);
    await t.close();
    t = startTestSluice(t.dir, { clock: () => now, tail: { recheckMs: 50 } });
    const r = await t.call("GET", `${WS}/info`, { headers: { cookie: kept.cookie } });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { project: { id: string } }).project.id).toBe(wsId);
    expect((await t.call("GET", `${WS}/info`, { headers: { cookie: ended.cookie } })).status).toBe(401);
  });
});
