// A real Sluice listening on 127.0.0.1 and a real headless Chromium (@sparticuz/chromium, installed by npm) for the
// web explorer's tests (contract §12). One browser per test file: launching costs about a second.
import chromium from "@sparticuz/chromium";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
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
