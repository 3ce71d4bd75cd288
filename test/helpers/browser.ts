// A real Sluice listening on 127.0.0.1 and a real headless Chromium (@sparticuz/chromium, installed by npm) for the
// web explorer's tests (contract §12). One browser per test file: launching costs about a second.
import chromium from "@sparticuz/chromium";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import puppeteer, { type Browser, type ElementHandle, type Page } from "puppeteer-core";
import { startTestSluice, type TestOptions, type TestSluice, removeDir } from "./sluice.ts";

/** UiSluice is a test server reachable over HTTP, with a read key and a write key of one workspace environment. */
export interface UiSluice {
  t: TestSluice;
  base: string;
  /** a read-only key (logs:read) */
  ro: string;
  /** a read-write key of the same workspace and environment, to store entries */
  rw: string;
  workspaceId: string;
  /** drop closes every connection and stops listening; listen opens the same port again (storage stays open) */
  drop(): void;
  listen(): void;
  stop(): Promise<void>;
}

/** startUiSluice starts a server on a random port of 127.0.0.1. */
export async function startUiSluice(opts: TestOptions = {}): Promise<UiSluice> {
  const t = startTestSluice(undefined, opts);
  const ws = await t.workspace();
  const ro = await ws.key("production", "ro");
  const rw = await ws.key("production", "rw");
  const serve = (port: number) => Bun.serve({ port, hostname: "127.0.0.1", idleTimeout: 0, fetch: (r) => t.app.handle(r) });
  let server = serve(0);
  const port = server.port!;
  return {
    t,
    base: `http://127.0.0.1:${port}`,
    ro,
    rw,
    workspaceId: ws.id,
    drop: () => server.stop(true),
    listen: () => {
      server = serve(port);
    },
    async stop() {
      server.stop(true);
      await t.close();
      removeDir(t.dir);
    },
  };
}

/** launchBrowser starts headless Chromium. */
export async function launchBrowser(): Promise<Browser> {
  return launch().catch((e) => {
    throw new Error(`headless Chromium did not start (it needs the system's NSS: apt-get install libnss3): ${(e as Error).message}`, { cause: e });
  });
}

async function launch(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: await chromium.executablePath(),
    // @sparticuz/chromium's own args suit a serverless function (one process, web security off); a test wants a
    // browser as a person has it: same-origin policy on, a process per page. Only the sandbox is off (root in CI).
    args: [
      "--no-sandbox",
      "--disable-setuid-sandbox",
      "--no-zygote",
      "--use-gl=angle",
      "--use-angle=swiftshader",
      "--enable-unsafe-swiftshader",
      "--in-process-gpu",
      "--font-render-hinting=none",
      "--lang=en-US",
    ],
    env: { ...process.env, LANG: "en_US.UTF-8" }, // a bare C locale gives the page a language tag Intl refuses
    headless: "shell", // the package ships chrome-headless-shell
    defaultViewport: { width: 1280, height: 800 },
  });
}

/** signIn opens /ui and signs in with a key as a person would: the labelled field, the button. */
export async function signIn(page: Page, base: string, key: string, path = "/ui"): Promise<void> {
  await page.goto(`${base}${path}`);
  await (await role(page, "textbox", "API key")).type(key);
  await (await role(page, "button", "Sign in")).click();
  await role(page, "listbox", "Log entries");
}

/** aria is puppeteer's accessibility-tree selector for a role and an exact accessible name. (Its `::-p-aria` form does not
 * filter under Bun; the older `aria/` prefix does.) */
export const aria = (roleName: string, name?: string) => (name === undefined ? `aria/[role="${roleName}"]` : `aria/${name}[role="${roleName}"]`);

/** role waits for the element with this role and accessible name, as a person would look for it. */
export async function role(page: Page, roleName: string, name?: string, timeout = 10_000) {
  const handle = await page.waitForSelector(aria(roleName, name), { timeout });
  if (!handle) throw new Error(`no ${roleName} named ${JSON.stringify(name)}`);
  return handle;
}

/** textOf is an element's text. */
export const textOf = (h: ElementHandle) => h.evaluate((e) => (e as unknown as { textContent: string }).textContent ?? "");

/** listStatus is the line above the list ("640 entries · 100 loaded"). */
export async function listStatus(page: Page): Promise<string> {
  const main = await role(page, "main", "Entries");
  return textOf((await main.$(aria("status")))!);
}

/** waitStatus waits until the list's status line matches. */
export async function waitStatus(page: Page, re: RegExp, timeout = 10_000): Promise<string> {
  const deadline = Date.now() + timeout;
  let last = "";
  while (Date.now() < deadline) {
    last = await listStatus(page).catch(() => "");
    if (re.test(last)) return last;
    await Bun.sleep(50);
  }
  throw new Error(`status never matched ${re}: ${JSON.stringify(last)}`);
}

/** rows are the texts of the list's visible rows. */
export async function rows(page: Page): Promise<string[]> {
  const list = await role(page, "listbox", "Log entries");
  return Promise.all((await list.$$(aria("option"))).map(textOf));
}

/** runQuery types a query into the query bar and presses Enter. */
export async function runQuery(page: Page, q: string): Promise<void> {
  const input = await role(page, "combobox", "Query");
  await input.click({ count: 3 });
  await page.keyboard.press("Backspace");
  await input.type(q);
  await page.keyboard.press("Escape"); // close the completion, so that Enter runs
  await input.focus();
  await page.keyboard.press("Enter");
}

/** entriesCount reads the count of a status line. */
export const entriesCount = (status: string) => Number(/^([\d,]+) entries/.exec(status)?.[1].replace(/,/g, "") ?? Number.NaN);

const axeSource = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** runAxe runs axe-core in the page (through the DevTools protocol, which the page's CSP does not bind) and lists serious and critical violations. */
export async function runAxe(page: Page): Promise<string[]> {
  await page.evaluate(axeSource);
  const violations = (await page.evaluate(() =>
    (globalThis as any).axe
      .run((globalThis as any).document, { resultTypes: ["violations"] })
      .then((r: any) => r.violations.map((v: any) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n: any) => n.target.join(" ")).slice(0, 3) }))),
  )) as { id: string; impact: string; nodes: string[] }[];
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${v.impact} ${v.id}: ${v.nodes.join(", ")}`);
}
