// The Alerts page of the web explorer in a real headless Chromium (contract §16's /ui part): "Alert on this query"
// from the query bar prefills a rule, its preview chart shows what it would have done, saving lists it, and a
// channel's test button sends a test notice.
import { afterAll, beforeAll, expect, test } from "bun:test";
import type { Browser } from "puppeteer-core";
import { launchBrowser, role, runAxe, signIn, startUiSluice, textOf, type UiSluice, waitStatus } from "../helpers/browser.ts";
import { generatorUrl } from "../../src/alerts/notices.ts";
import { httpReceiver } from "../helpers/receivers.ts";

const WS = "/api/v1/workspace";
let s: UiSluice;
let browser: Browser;
let star: string;
const hook = httpReceiver();

beforeAll(async () => {
  [s, browser] = await Promise.all([startUiSluice({ alertMinEveryMs: 1000 }), launchBrowser()]);
  star = (await s.t.svc.admin.createKey(s.workspaceId, { environment: "production", type: "rw", scopes: ["*"] })).key;
  const entries = Array.from({ length: 12 }, (_, i) => ({ action: "checkout", level: i % 3 ? "error" : "info", clientTimestamp: new Date().toISOString() }));
  expect((await api("POST", "/logs/bulk", entries)).status).toBe(201);
  expect((await api("POST", "/alerts/channels", { name: "hook", type: "webhook", config: { url: hook.url } })).status).toBe(201);
}, 30_000);
afterAll(async () => {
  await browser?.close();
  await s?.stop();
  hook.stop();
});

function api(method: string, path: string, body?: unknown) {
  return fetch(`${s.base}${WS}${path}`, {
    method,
    headers: { "x-api-key": star, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

test("Alert on this query: a prefilled rule, its preview chart, saving it lists it on the Alerts page; a channel's Test button", async () => {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await signIn(page, s.base, star, "/ui?q=level%3Derror");
  await (await role(page, "button", "Alert on this query")).click();
  await role(page, "heading", "Alerts");
  const query = await role(page, "textbox", "Query");
  expect(await query.evaluate((e) => (e as unknown as { value: string }).value)).toBe("level=error");
  await (await role(page, "button", "Preview")).click();
  const chart = await page.waitForSelector('svg[role="img"][aria-label^="Preview:"]', { timeout: 10_000 });
  expect(await chart!.evaluate((e) => e.getAttribute("aria-label"))).toMatch(/^Preview: \d+ evaluations, \d+ incidents?$/);
  await (await role(page, "button", "Save rule")).click();
  await page.waitForFunction(() => (globalThis as any).document.body.textContent?.includes("Saved rule level=error."), { timeout: 10_000 });
  const rules = (await (await api("GET", "/alerts/rules")).json()) as { name: string; query: string }[];
  expect(rules).toMatchObject([{ name: "level=error", query: "level=error" }]);
  const table = await page.waitForSelector('section[aria-labelledby="alerts-rules"] table', { timeout: 10_000 });
  expect(await textOf(table!)).toContain("level=error");
  await (await role(page, "button", "Test hook")).click();
  await page.waitForFunction(() => (globalThis as any).document.body.textContent?.includes("Delivered"), { timeout: 10_000 });
  expect(hook.got).toHaveLength(1);
  // the rule fires at its next evaluation; from the page: silence its group for an hour, disable it, delete it
  const saved = ((await (await api("GET", "/alerts/rules")).json()) as Parameters<typeof s.t.svc.evaluator.evaluate>[1][])[0];
  await s.t.svc.evaluator.evaluate({ ws: s.workspaceId, env: "production" }, saved, Math.ceil(Date.now() / 60_000) * 60_000); // its next instant
  await (await role(page, "button", "Refresh")).click();
  await (await role(page, "button", "Silence 1h: level=error")).click();
  await page.waitForFunction(() => (globalThis as any).document.body.textContent?.includes("silenced for an hour from the Alerts page"), { timeout: 10_000 });
  const silences = (await (await api("GET", "/alerts/silences")).json()) as { rule_id: string; match: unknown }[];
  expect(silences).toMatchObject([{ match: {} }]);
  expect(await runAxe(page)).toEqual([]); // the Alerts page passes the accessibility checks the other views do
  await (await role(page, "button", "Disable level=error")).click();
  await role(page, "button", "Enable level=error");
  expect(((await (await api("GET", "/alerts/rules")).json()) as { enabled: boolean }[])[0].enabled).toBe(false);
  await (await role(page, "button", "Delete level=error")).click();
  await page.waitForFunction(() => (globalThis as any).document.body.textContent?.includes("No rule yet."), { timeout: 10_000 });
  await ctx.close();
}, 40_000);

test("a notice's generatorURL opens the explorer on the rule's query over the evaluated window", async () => {
  const rule = { query: "level=error action~checkout" } as Parameters<typeof generatorUrl>[1];
  const to = Date.now();
  const url = generatorUrl(s.base, rule, { axis: "server", fromMs: to - 3_600_000, toMs: to });
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await signIn(page, s.base, star, new URL(url).pathname + new URL(url).search);
  const q = await role(page, "combobox", "Query");
  expect(await q.evaluate((e) => (e as unknown as { value: string }).value)).toBe("level=error action~checkout");
  const range = await page.$eval("label.range select", (e) => (e as unknown as { value: string }).value);
  expect(range).toBe("custom");
  expect(await waitStatus(page, /^[\d,]+ entries/)).toMatch(/^8 entries/); // the 8 error entries of checkout, all within the hour
  await ctx.close();
}, 30_000);
