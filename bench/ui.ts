// ui bench: the web explorer (contract §12) over 1M entries in headless Chromium, through the real app on a real LMDB.
// - first load: the page's JS and CSS, gzipped, against the 300 KB target;
// - Enter → first rows painted: from the Enter keydown in the query bar to the first task after the frame that shows the
//   rows (the app marks it), per query, median of several rounds; baseline in the same run: the same first page (100
//   entries) fetched by the page itself, which is the floor the UI adds its work to;
// - scrolling 100,000 loaded rows: frame times while scrolling through them, against the same with 1,000 loaded.
// BENCH_UI_ENTRIES sets the entry count (default 1,000,000); BENCH_UI_ROUNDS the rounds per query (default 7).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "puppeteer-core";
import { compose } from "../src/compose.ts";
import { uiBundle } from "../src/http/ui-assets.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import type { Entry } from "../src/storage/entries.ts";
import { launchBrowser, role, signIn } from "../test/helpers/browser.ts";
import { syntheticEntry } from "./data.ts";

const ENTRIES = Number(process.env.BENCH_UI_ENTRIES ?? 1_000_000);
const ROUNDS = Number(process.env.BENCH_UI_ROUNDS ?? 7);
const SCROLL_ROWS = Math.min(100_000, ENTRIES);
const BLOCK = 1000;
const SPAN_MS = 20 * 3_600_000; // within the explorer's default range, the last 24 hours
const QUERIES = ["", "level=error", "timeout", 'action~"order*" tag=svc-3', "metadata.status_code=500 actor.role=admin"];
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))];
const f1 = (n: number) => n.toFixed(1);

/** Win is the little of the page's window the bench reads (the bench's own types have no DOM). */
interface El {
  textContent: string | null;
  scrollTop: number;
  scrollHeight: number;
  clientHeight: number;
}
interface Win {
  document: {
    querySelector(selector: string): El;
    querySelectorAll(selector: string): { length: number };
    addEventListener(type: string, f: (e: { key: string }) => unknown, options: object): void;
  };
  __enter: number;
  requestAnimationFrame(f: (now: number) => void): number;
}

/** load stores the entries straight through the entry store, server timestamps spread over the last 20 hours. */
async function load(s: ReturnType<typeof compose>, key: { ws: string; env: "production" }) {
  const ids = new IdGenerator();
  const plan = BUILT_IN_PLANS[3];
  const blocks = Math.ceil(ENTRIES / BLOCK);
  const start = Date.now() - SPAN_MS - 60_000;
  const t0 = performance.now();
  for (let b = 0; b < blocks; b++) {
    const raws = Array.from({ length: Math.min(BLOCK, ENTRIES - b * BLOCK) }, (_, i) => syntheticEntry(b * BLOCK + i));
    const { ms, ids: fresh } = ids.next(raws.length, start + Math.floor((b * SPAN_MS) / blocks));
    const entries = raws.map((r, i) => ({ ...checkEntry(r, i, plan).entry!, id: fresh[i] }) as unknown as Entry);
    await s.entries.append(key, ms, entries, -1);
  }
  await s.entries.settled();
  console.error(`loaded ${ENTRIES} entries in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

/** settle waits until the run's counts (histogram and facets) have arrived, so the next round starts on an idle server. */
async function settle(page: Page) {
  await page.waitForFunction(
    () => {
      const d = (globalThis as unknown as Win).document;
      const status = d.querySelector('main [role="status"]')?.textContent ?? "";
      return /^[\d,]+ entries/.test(status) && !/Counting/.test(d.querySelector(".facets")?.textContent ?? "Counting");
    },
    { timeout: 120_000 },
  );
}

/** firstRows runs a query as a person does and returns ms from the Enter keydown to the rows painted, and to the counts. */
async function firstRows(page: Page, q: string): Promise<{ ms: number; counts: number }> {
  const input = await role(page, "combobox", "Query");
  await input.click({ count: 3 });
  await page.keyboard.press("Backspace");
  if (q) await input.type(q);
  await page.keyboard.press("Escape");
  await page.evaluate(() => {
    const w = globalThis as unknown as Win;
    for (const m of ["sluice:rows", "sluice:hits", "sluice:facets"]) performance.clearMarks(m);
    w.document.addEventListener("keydown", (e: { key: string }) => e.key === "Enter" && (w.__enter = performance.now()), { capture: true, once: true });
  });
  await page.keyboard.press("Enter");
  await page.waitForFunction(() => performance.getEntriesByName("sluice:rows").length > 0, { timeout: 60_000 });
  const ms = await page.evaluate(() => performance.getEntriesByName("sluice:rows")[0].startTime - (globalThis as unknown as Win).__enter);
  await settle(page);
  const counts = await page.evaluate(() =>
    Math.max(...["sluice:hits", "sluice:facets"].map((m) => performance.getEntriesByName(m)[0].startTime - (globalThis as unknown as Win).__enter)),
  );
  return { ms, counts };
}

/** apiFirstPage is the baseline: the same first page fetched from the page, as the explorer asks for it. */
async function apiFirstPage(page: Page, q: string): Promise<number> {
  return page.evaluate(async (query) => {
    const to = new Date(Date.now() + 1).toISOString();
    const from = new Date(Date.now() + 1 - 86_400_000).toISOString();
    const t = performance.now();
    const r = await fetch("/api/v1/workspace/logs/query", {
      method: "POST",
      headers: { "content-type": "application/json", "x-sluice-ui": "1" },
      body: JSON.stringify({ query, from, to, pageSize: 100 }),
    });
    await r.json();
    return performance.now() - t;
  }, q);
}

/** loadRows scrolls to the end of the list until `n` rows are loaded. */
async function loadRows(page: Page, n: number) {
  const t0 = performance.now();
  for (;;) {
    const loaded = await page.evaluate(() => {
      const list = (globalThis as unknown as Win).document.querySelector('[role="listbox"][aria-label="Log entries"]');
      list.scrollTop = list.scrollHeight;
      const m = /([\d,]+) loaded/.exec((globalThis as unknown as Win).document.querySelector('main [role="status"]').textContent ?? "");
      return m ? Number(m[1].replace(/,/g, "")) : Number.POSITIVE_INFINITY;
    });
    if (loaded >= n) break;
    await Bun.sleep(5);
  }
  return performance.now() - t0;
}

/** scrollFrames scrolls through the whole list in steps, one per frame, and returns each frame's duration. */
function scrollFrames(page: Page): Promise<number[]> {
  return page.evaluate(
    () =>
      new Promise<number[]>((done) => {
        const w = globalThis as unknown as Win;
        const list = w.document.querySelector('[role="listbox"][aria-label="Log entries"]');
        list.scrollTop = 0;
        const frames: number[] = [];
        const steps = 300;
        const stride = (list.scrollHeight - list.clientHeight) / steps;
        let last = performance.now();
        let i = 0;
        const step = (now: number) => {
          frames.push(now - last);
          last = now;
          if (++i > steps) return done(frames.slice(1));
          list.scrollTop = i * stride;
          w.requestAnimationFrame(step);
        };
        w.requestAnimationFrame(step);
      }),
  );
}

export async function benchUi() {
  const bundle = await uiBundle();
  const gz = Object.values(bundle.assets).reduce((n, f) => n + f.gzip.byteLength, 0);
  const raw = Object.values(bundle.assets).reduce((n, f) => n + f.body.byteLength, 0);
  console.log(
    `first load: JS+CSS ${(gz / 1024).toFixed(1)} KB gzipped (${(raw / 1024).toFixed(1)} KB raw), page ${bundle.page.gzip.byteLength} B; target ≤ 300 KB`,
  );

  const dir = mkdtempSync(join(tmpdir(), "sluice-uibench-"));
  const s = compose({ dataDir: dir, plans: new PlanTable(), adminToken: "bench", log: () => {}, ipRatePerMinute: -1 });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", idleTimeout: 0, fetch: (r) => s.app.handle(r) });
  const browser = await launchBrowser();
  try {
    const ws = await s.admin.createWorkspace({ name: "bench" });
    const key = (await s.admin.createKey(ws.id, { environment: "production", type: "ro" })).key;
    await load(s, { ws: ws.id, env: "production" });
    const page = await browser.newPage();
    await signIn(page, `http://127.0.0.1:${server.port}`, key);
    await settle(page);
    console.log(
      `\nEnter → first rows painted over ${ENTRIES.toLocaleString("en")} entries (last 24 hours), median of ${ROUNDS}; baseline: the page's own fetch of the same first page`,
    );
    console.log("| query | explorer | p90 | baseline fetch | explorer − baseline | histogram and facets counted (median) |");
    console.log("|---|---:|---:|---:|---:|---:|");
    for (const q of QUERIES) {
      const ui: number[] = [];
      const counts: number[] = [];
      const api: number[] = [];
      for (let r = 0; r < ROUNDS; r++) {
        api.push(await apiFirstPage(page, q));
        const t = await firstRows(page, q);
        ui.push(t.ms);
        counts.push(t.counts);
      }
      console.log(
        `| \`${q || "(empty)"}\` | ${f1(median(ui))} ms | ${f1(pct(ui, 0.9))} ms | ${f1(median(api))} ms | ${f1(median(ui) - median(api))} ms | ${f1(median(counts))} ms |`,
      );
    }

    await firstRows(page, "");
    const small = await scrollFrames(page);
    await loadRows(page, 1000);
    const few = await scrollFrames(page);
    const loadMs = await loadRows(page, SCROLL_ROWS);
    const many = await scrollFrames(page);
    const rowsInPage = await page.evaluate(() => (globalThis as unknown as Win).document.querySelectorAll('[role="listbox"] [role="option"]').length);
    console.log(
      `\nscrolling (300 frames through the whole list; ${rowsInPage} rows in the page at a time; loading ${SCROLL_ROWS} rows by paging took ${(loadMs / 1000).toFixed(1)} s)`,
    );
    console.log("| rows loaded | median frame | p99 frame | frames over 50 ms |");
    console.log("|---:|---:|---:|---:|");
    for (const [n, fr] of [
      [100, small],
      [1000, few],
      [SCROLL_ROWS, many],
    ] as const) {
      console.log(`| ${n.toLocaleString("en")} | ${f1(median(fr))} ms | ${f1(pct(fr, 0.99))} ms | ${fr.filter((x) => x > 50).length} |`);
    }
  } finally {
    await browser.close();
    server.stop(true);
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.main) await benchUi();
