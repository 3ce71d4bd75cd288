// The web explorer in a real headless Chromium (contract §12), driven as a person would: by roles and labels.
// One server and one browser for the file; each test signs in in a fresh browser context of its own.
import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "puppeteer-core";
import {
  aria,
  entriesCount,
  launchBrowser,
  listStatus,
  role,
  rows,
  runAxe,
  runQuery,
  signIn,
  startUiSluice,
  textOf,
  type UiSluice,
  waitStatus,
} from "../helpers/browser.ts";
import { storeSample } from "../helpers/ui-data.ts";

const WS = "/api/v1/workspace";
const SAMPLE = 640;
const XSS = {
  script: "<script>window.__xss = 'script'</script>",
  img: `<img src=x onerror="window.__xss = 'img'">`,
  link: "javascript:window.__xss = 'link'",
};

let s: UiSluice;
let browser: Browser;
const contexts: BrowserContext[] = [];
/** what the browser refused under the page's Content-Security-Policy, per page */
const refused = new WeakMap<Page, string[]>();

beforeAll(async () => {
  [s, browser] = await Promise.all([startUiSluice(), launchBrowser()]);
  await storeSample(s.base, s.rw, SAMPLE, 0, 160);
  const xss = [
    { action: XSS.script, level: "error", message: XSS.img, clientTimestamp: "2026-11-22T10:00:00Z", metadata: { link: XSS.link, html: XSS.script } },
    { action: "xss.probe", level: "warn", message: XSS.link, clientTimestamp: "2026-11-22T10:00:00Z", actor: { name: XSS.img }, tags: ["xss"] },
  ];
  expect((await api("POST", "/logs/bulk", xss)).status).toBe(201);
}, 30_000);
afterEach(async () => {
  for (const c of contexts.splice(0)) await c.close().catch(() => {});
});
afterAll(async () => {
  await browser?.close();
  await s?.stop();
});

/** api calls the workspace API with the read-write key. */
function api(method: string, path: string, body?: unknown) {
  return fetch(`${s.base}${WS}${path}`, {
    method,
    headers: { "x-api-key": s.rw, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

/** fresh opens a signed-in page in a browser context of its own (its own cookies), in a colour scheme. */
async function fresh(path = "/ui", scheme: "light" | "dark" = "light"): Promise<Page> {
  const ctx = await browser.createBrowserContext();
  contexts.push(ctx);
  const page = await ctx.newPage();
  const seen: string[] = [];
  refused.set(page, seen);
  page.on("console", (m) => /Content Security Policy/i.test(m.text()) && seen.push(m.text()));
  await page.emulateMediaFeatures([{ name: "prefers-color-scheme", value: scheme }]);
  await signIn(page, s.base, s.ro, path);
  return page;
}

describe("the web explorer in a browser", () => {
  test("sign-in keeps the key nowhere the page can read: an HttpOnly cookie, no storage, not in the page", async () => {
    const page = await fresh();
    const held = await page.evaluate(() => {
      const w = globalThis as unknown as { document: { cookie: string; body: { innerHTML: string } }; localStorage: Storage; sessionStorage: Storage };
      return { cookie: w.document.cookie, local: w.localStorage.length, session: w.sessionStorage.length, html: w.document.body.innerHTML };
    });
    expect(held).toMatchObject({ cookie: "", local: 0, session: 0 });
    expect(held.html).not.toContain(s.ro);
    const cookies = await page.browserContext().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite])).toEqual([["sluice_session", true, "Strict"]]);
    expect(cookies[0].value).not.toContain(s.ro.slice(-12));
    // sign-out ends it: the sign-in form is back and the cookie no longer reads
    await (await role(page, "button", "Sign out")).click();
    await role(page, "textbox", "API key");
    const r = await page.evaluate((url) => fetch(url).then((x) => x.status), `${s.base}${WS}/info`);
    expect(r).toBe(401);
  }, 20_000);

  test("a revoked key sends the page back to the sign-in", async () => {
    const k = await s.t.svc.admin.createKey(s.workspaceId, { environment: "production", type: "ro" });
    const ctx = await browser.createBrowserContext();
    contexts.push(ctx);
    const page = await ctx.newPage();
    await signIn(page, s.base, k.key);
    await waitStatus(page, /^[\d,]+ entries/);
    await s.t.svc.admin.revokeKey(k.id);
    await (await role(page, "button", "Run")).click();
    await role(page, "textbox", "API key");
  }, 20_000);

  test("a query's count and its facets' counts equal the API's", async () => {
    const page = await fresh();
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const facets = (await (await api("POST", "/logs/facets", { query: "level=error,warn", from, fields: ["level", "action"] })).json()) as {
      total: number;
      facets: { field: string; values: { value: string; count: number }[] }[];
    };
    expect(facets.total).toBeGreaterThan(50);
    await runQuery(page, "level=error,warn");
    await waitStatus(page, new RegExp(`^${facets.total} entries`));
    const sidebar = await role(page, "complementary", "Fields");
    const levels = await sidebar.waitForSelector(aria("region", "level"));
    for (const v of facets.facets[0].values) expect(await levels!.waitForSelector(aria("button", `${v.value} ${v.count}`))).not.toBeNull();
    expect(facets.facets[0].values.map((v) => v.value).sort()).toEqual(["error", "warn"]);
  }, 20_000);

  test("clicking a facet value includes it and Alt-click excludes it", async () => {
    const page = await fresh();
    const from = new Date(Date.now() - 86_400_000).toISOString();
    const info = ((await (await api("POST", "/logs/facets", { query: "level=info", from })).json()) as { total: number }).total;
    await waitStatus(page, new RegExp(`^${SAMPLE + 2} entries`));
    const infoButton = async () => {
      const levels = await (await role(page, "complementary", "Fields")).waitForSelector(aria("region", "level"));
      const labelled = await Promise.all((await levels!.$$(aria("button"))).map(async (b) => [b, await textOf(b)] as const));
      return labelled.find(([, t]) => t.startsWith("info "))![0];
    };
    await (await infoButton()).click();
    await waitStatus(page, new RegExp(`^${info} entries`));
    expect(await (await role(page, "combobox", "Query")).evaluate((e) => (e as any).value)).toBe("level=info");
    await page.keyboard.down("Alt");
    await (await infoButton()).click();
    await page.keyboard.up("Alt");
    await waitStatus(page, new RegExp(`^${SAMPLE + 2 - info} entries`));
    expect(await (await role(page, "combobox", "Query")).evaluate((e) => (e as any).value)).toBe("level!=info");
  }, 20_000);

  test("the query bar completes facets, object paths and top values", async () => {
    const page = await fresh();
    const input = await role(page, "combobox", "Query");
    await input.click();
    await input.type("meta");
    await role(page, "option", "metadata.");
    await input.type("data.http.st");
    await role(page, "option", "metadata.http.status");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Tab");
    expect(await input.evaluate((e) => (e as unknown as { value: string }).value)).toBe("metadata.http.status=");
    await role(page, "option", "200");
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    expect(await input.evaluate((e) => (e as unknown as { value: string }).value)).toMatch(/^metadata\.http\.status=\d+ $/);
  }, 20_000);

  test("a query error is shown with its code and at its position", async () => {
    const page = await fresh();
    await runQuery(page, 'level=error action~"unterminated');
    const alert = await role(page, "alert");
    const text = await textOf(alert);
    expect(text).toContain("VALIDATION_QUERY_SYNTAX");
    expect(text).toContain("at character 20");
    const input = await role(page, "combobox", "Query");
    expect(await input.evaluate((e) => [(e as any).getAttribute("aria-invalid"), (e as any).selectionStart])).toEqual(["true", 19]);
  }, 20_000);

  test("the list pages through the cursor as far back as the data goes", async () => {
    const page = await fresh();
    const total = entriesCount(await waitStatus(page, /^[\d,]+ entries/));
    expect(total).toBe(SAMPLE + 2);
    const list = await role(page, "listbox", "Log entries");
    for (let i = 0; i < 40 && / loaded/.test(await listStatus(page)); i++) {
      await list.evaluate((e) => {
        (e as any).scrollTop = (e as any).scrollHeight;
      });
      await Bun.sleep(60);
    }
    expect(await listStatus(page)).toMatch(/^642 entries$/);
    // the last rows are the oldest entries: the first sample entries stored
    const last = await rows(page);
    expect(last.length).toBeGreaterThan(10);
  }, 20_000);

  test("an entry shows every field with filter for/out, its JSON, a permalink, and context that loads more both ways", async () => {
    const page = await fresh("/ui?q=level%3Derror");
    await waitStatus(page, /^[\d,]+ entries/);
    const list = await role(page, "listbox", "Log entries");
    const options = await list.$$(aria("option"));
    await options[5].click();
    const panel = await role(page, "region", "Entry");
    await (await panel.$(aria("button", "Copy JSON")))!.click();
    await page.waitForFunction(() => /Copied the JSON/.test((globalThis as any).document.querySelector(".entry [role=status]")?.textContent ?? ""));
    const permalink = await panel.$(aria("link", "Permalink"));
    expect(await permalink!.evaluate((a) => (a as any).href)).toMatch(/\/ui\?.*id=[0-9a-f-]{36}/);
    const around = await panel.waitForSelector(aria("list", "Entries around this one, newest first"));
    const before = (await around!.$$("li")).length;
    expect(before).toBe(21);
    await (await panel.$(aria("button", "Load older")))!.click();
    await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll(".context li").length > n, {}, before);
    await (await panel.$(aria("button", "Load newer")))!.click();
    await page.waitForFunction((n) => (globalThis as any).document.querySelectorAll(".context li").length > n + 20, {}, before);
    const buttons = await Promise.all(
      (await panel.$$(aria("button"))).map(async (b) => [b, await b.evaluate((e) => (e as any).getAttribute("aria-label") ?? "")] as const),
    );
    const out = buttons.find(([, l]) => l.startsWith("Filter out metadata.http.route "))!;
    const route = out[1].slice("Filter out metadata.http.route ".length);
    await out[0].click();
    await page.waitForFunction((r) => (globalThis as any).document.querySelector("#q").value === `level=error metadata.http.route!=${r}`, {}, route);
    await waitStatus(page, /^[\d,]+ entries/);
  }, 20_000);

  test("the live tail shows a new entry; pause and resume, and a dropped connection, lose none and repeat none", async () => {
    const page = await fresh("/ui?q=tag%3Dlive");
    await (await role(page, "button", "Live tail")).click();
    await waitStatus(page, /^Live · 0 entries/);
    const store = (message: string) =>
      api("POST", "/logs", { action: "tail.probe", level: "info", message, tags: ["live"], clientTimestamp: "2026-11-22T10:00:00Z" });
    expect((await store("first live entry")).status).toBe(201);
    await waitStatus(page, /^Live · 1 entries/);
    expect((await rows(page))[0]).toContain("first live entry");
    await (await role(page, "button", "Pause")).click();
    await waitStatus(page, /^Paused/);
    for (const m of ["while paused one", "while paused two"]) expect((await store(m)).status).toBe(201);
    await (await role(page, "button", "Resume")).click();
    await waitStatus(page, /^Live · 3 entries/);
    // a dropped connection: the entry stored while the page cannot reach the server arrives once it can again
    s.drop();
    await waitStatus(page, /^Reconnecting/);
    const stored = await s.t.call("POST", `${WS}/logs`, {
      key: s.rw,
      body: { action: "tail.probe", level: "info", message: "while disconnected", tags: ["live"], clientTimestamp: "2026-11-22T10:00:00Z" },
    });
    expect(stored.status).toBe(201);
    s.listen();
    await waitStatus(page, /^Live · 4 entries/, 15_000);
    const texts = await rows(page);
    for (const m of ["while disconnected", "while paused one", "while paused two", "first live entry"])
      expect(texts.filter((t) => t.includes(m)).length).toBe(1);
    expect(page.url()).toContain("live=1");
  }, 20_000);

  test("the URL holds the whole view: a reload shows the same query, range, fields and open entry", async () => {
    const page = await fresh();
    await runQuery(page, "level=warn");
    await waitStatus(page, /^[\d,]+ entries/);
    const list = await role(page, "listbox", "Log entries");
    await (await list.$$(aria("option")))[2].click();
    await role(page, "region", "Entry");
    const url = page.url();
    expect(url).toMatch(/q=level%3Dwarn.*id=/);
    await page.reload();
    await role(page, "region", "Entry");
    expect(await (await role(page, "combobox", "Query")).evaluate((e) => (e as any).value)).toBe("level=warn");
    expect(page.url()).toBe(url);
    const other = await (await browser.createBrowserContext()).newPage();
    await signIn(other, s.base, s.ro, url.slice(s.base.length));
    await role(other, "region", "Entry");
    await other.browserContext().close();
  }, 20_000);

  test("script, onerror= and javascript: payloads in messages, actions and JSON values show as text and never run", async () => {
    const page = await fresh();
    await runQuery(page, "xss.probe");
    await waitStatus(page, /^1 entries/);
    expect((await rows(page))[0]).toContain(XSS.link);
    await runQuery(page, `action="${XSS.script.replace(/"/g, '\\"')}"`);
    await waitStatus(page, /^1 entries/);
    const shown = (await rows(page))[0];
    expect(shown).toContain(XSS.script);
    expect(shown).toContain(XSS.img);
    const list = await role(page, "listbox", "Log entries");
    await (await list.$$(aria("option")))[0].click();
    const panel = await role(page, "region", "Entry");
    expect(await textOf(panel)).toContain(XSS.link);
    await Bun.sleep(200);
    const state = await page.evaluate(() => {
      const d = (globalThis as any).document;
      // the CSP holds in this browser: an inline script put into the page does not run either
      const probe = d.createElement("script");
      probe.textContent = "window.__inline = true";
      d.body.append(probe);
      return { xss: (globalThis as any).__xss ?? null, inline: (globalThis as any).__inline ?? null, imgs: d.querySelectorAll("img").length };
    });
    expect(state).toEqual({ xss: null, inline: null, imgs: 0 });
  }, 20_000);

  test("keyboard: / focuses the query, j and k move, Enter opens, Esc closes, t tails, ? shows the help", async () => {
    const page = await fresh();
    await waitStatus(page, /^[\d,]+ entries/);
    await (await role(page, "listbox", "Log entries")).focus();
    await page.keyboard.press("j");
    await page.keyboard.press("j");
    await page.keyboard.press("k");
    const selected = await page.evaluate(() => (globalThis as any).document.querySelector('[role="option"][aria-selected="true"]')?.id ?? "");
    const second = await page.evaluate(() => (globalThis as any).document.querySelectorAll('[role="listbox"] [role="option"]')[1]?.id);
    expect(selected).toBe(second);
    await page.keyboard.press("Enter");
    await role(page, "region", "Entry");
    expect(page.url()).toContain(`id=${selected.slice(4)}`);
    // with the entry open, j opens the next one
    const third = await page.evaluate(() => (globalThis as any).document.querySelectorAll('[role="listbox"] [role="option"]')[2]?.id);
    await page.keyboard.press("j");
    await page.waitForFunction((id) => (globalThis as any).location.search.includes(`id=${id}`), {}, third.slice(4));
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !(globalThis as any).location.search.includes("id="));
    await page.keyboard.press("?");
    await role(page, "dialog", "Keyboard shortcuts");
    await page.keyboard.press("Escape");
    await page.waitForFunction(() => !(globalThis as any).document.querySelector('[role="dialog"]'));
    await page.keyboard.press("t");
    await waitStatus(page, /^(Live|Connecting)/);
    await page.keyboard.press("t");
    await page.keyboard.press("/");
    expect(await page.evaluate(() => (globalThis as any).document.activeElement?.id)).toBe("q");
  }, 20_000);

  test("the histogram zooms to a dragged range, and a custom range is checked", async () => {
    const page = await fresh("/ui?range=1h");
    await waitStatus(page, /^[\d,]+ entries/);
    const chart = await role(page, "image", "Entries over time by level; drag across to zoom");
    await page.waitForFunction(() => (globalThis as any).document.querySelector(".u-over"));
    const box = (await chart.boundingBox())!;
    const y = box.y + box.height / 3;
    await page.mouse.move(box.x + box.width * 0.5, y);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.75, y, { steps: 5 });
    await page.mouse.move(box.x + box.width - 2, y, { steps: 5 });
    await page.mouse.up();
    await page.waitForFunction(() => (globalThis as any).location.search.includes("range=custom"));
    const q = new URL(page.url()).searchParams;
    expect(Date.parse(q.get("from")!)).toBeLessThan(Date.parse(q.get("to")!));
    expect(await (await role(page, "textbox", "From")).evaluate((e) => (e as any).value)).toBe(q.get("from"));
    // a range typed by hand is checked before it is used
    const fromInput = await role(page, "textbox", "From");
    await fromInput.click({ count: 3 });
    await fromInput.type("yesterday");
    await (await role(page, "button", "Apply")).click();
    expect(await textOf(await role(page, "alert"))).toContain("RFC 3339");
    expect(new URL(page.url()).searchParams.get("from")).toBe(q.get("from"));
  }, 20_000);

  test("export saves the current query as NDJSON, every matching entry once", async () => {
    const page = await fresh("/ui?q=level%3Dwarn");
    await waitStatus(page, /^[\d,]+ entries/);
    const dir = mkdtempSync(join(tmpdir(), "sluice-ui-export-"));
    try {
      const cdp = await page.createCDPSession();
      await cdp.send("Browser.setDownloadBehavior", { behavior: "allow", downloadPath: dir, browserContextId: (page.browserContext() as any).id });
      await (await role(page, "button", "Export NDJSON")).click();
      const deadline = Date.now() + 10_000;
      let files: string[] = [];
      while (Date.now() < deadline && !(files = readdirSync(dir)).some((f) => f.endsWith(".ndjson"))) await Bun.sleep(50);
      const file = files.find((f) => f.endsWith(".ndjson"))!;
      expect(file).toBeDefined();
      const lines = readFileSync(join(dir, file), "utf8").trim().split("\n");
      const entries = lines.map((l) => JSON.parse(l) as { id: string; level: string });
      const from = new Date(Date.now() - 86_400_000).toISOString();
      const facets = (await (await api("POST", "/logs/facets", { query: "level=warn", from })).json()) as { total: number };
      expect(entries.length).toBe(facets.total);
      expect(new Set(entries.map((e) => e.id)).size).toBe(entries.length);
      expect(entries.every((e) => e.level === "warn")).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 20_000);

  test("explain shows the query plan, and the rejected-entries page lists what shippers refused", async () => {
    const page = await fresh("/ui?q=level%3Derror");
    await waitStatus(page, /^[\d,]+ entries/);
    await (await role(page, "button", "Explain")).click();
    const dialog = await role(page, "dialog", "Query plan");
    expect(await textOf(dialog)).toContain("level");
    await page.keyboard.press("Escape");
    const bulk = `${JSON.stringify({ create: {} })}\n${JSON.stringify({ message: "refused", "log.level": "error", event: { action: "x".repeat(300) } })}\n`;
    const es = await fetch(`${s.base}/es/_bulk`, { method: "POST", headers: { "x-api-key": s.rw, "content-type": "application/x-ndjson" }, body: bulk });
    expect(es.status).toBe(200);
    await (await role(page, "link", "Rejected entries")).click();
    const table = await role(page, "table");
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll("table.rej tbody tr").length > 0);
    const text = await textOf(table);
    expect(text).toContain("es");
    expect(text).toContain("action");
    expect(page.url()).toContain("view=rejections");
  }, 20_000);

  test("both themes follow the system, and axe-core finds no serious or critical violation in either", async () => {
    for (const scheme of ["light", "dark"] as const) {
      const page = await fresh("/ui?q=level%3Derror", scheme);
      await waitStatus(page, /^[\d,]+ entries/);
      const bg = await page.evaluate(() => (globalThis as any).getComputedStyle((globalThis as any).document.body).backgroundColor);
      expect(bg).toBe(scheme === "dark" ? "rgb(13, 17, 23)" : "rgb(255, 255, 255)");
      const list = await role(page, "listbox", "Log entries");
      await (await list.$$(aria("option")))[0].click();
      await role(page, "region", "Entry");
      await page.waitForFunction(() => (globalThis as any).document.querySelectorAll(".context li").length > 1);
      const views: [string, () => Promise<unknown>][] = [
        ["list and entry", async () => {}],
        ["help", async () => (await role(page, "button", "Help")).click().then(() => role(page, "dialog", "Keyboard shortcuts"))],
        ["rejections", async () => page.keyboard.press("Escape").then(async () => (await role(page, "link", "Rejected entries")).click())],
      ];
      for (const [name, open] of views) {
        await open();
        await Bun.sleep(100);
        const found = await runAxe(page);
        expect({ scheme, name, found }).toEqual({ scheme, name, found: [] });
      }
      await (await role(page, "button", "Sign out")).click();
      await role(page, "textbox", "API key");
      expect({ scheme, name: "sign-in", found: await runAxe(page) }).toEqual({ scheme, name: "sign-in", found: [] });
      // the explorer itself (its scripts, uPlot's canvas and styles) needs nothing the policy refuses
      expect(refused.get(page)).toEqual([]);
    }
  }, 30_000);
});
