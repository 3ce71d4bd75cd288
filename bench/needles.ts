// needles bench: the queries a person runs when something breaks ("everything for this request id / user / order")
// over N synthetic entries that carry rare values in JSON fields and messages, through the real app (app.handle)
// on a real LMDB. Beside each: the same query forced onto the full range scan, and the deepest page through the
// cursor (up to page 100) beside page 1. Every answer is checked against the reference matcher on a full scan.
// It only uses what older versions have too (compose, app.handle, the planner's "range" candidate), so running
// this file in a checkout of an older commit measures that code on the same data: the code-before baseline.
// BENCH_NEEDLE_ENTRIES sets N (default 1,000,000; 10,000,000 takes about 10 minutes).
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compose } from "../src/compose.ts";
import { IdGenerator } from "../src/ids.ts";
import { checkEntry } from "../src/ingest/rules.ts";
import { BUILT_IN_PLANS, PlanTable } from "../src/limits/plans.ts";
import { matchQuery } from "../src/query/match.ts";
import { runCandidate } from "../src/query/page.ts";
import { parseQuery } from "../src/query/parser.ts";
import { planQuery } from "../src/query/plan.ts";
import { scan } from "../src/query/execute.ts";
import type { Entry } from "../src/storage/entries.ts";
import { syntheticEntry } from "./data.ts";
import { timeIt } from "./query.ts";

const N = Number(process.env.BENCH_NEEDLE_ENTRIES ?? 1_000_000);
const BLOCK = 1000;
const T0 = Date.UTC(2026, 10, 12);
const SPAN_MS = 10 * 86_400_000;
const PAGE = 50;

const mixed = (i: number) => Math.imul(i + 1, 2654435761) >>> 0;
/** needleCode is the rare reference needleEntry(i) puts in its message (EQ- and base 36). */
export const needleCode = (i: number) => `EQ-${mixed(i).toString(36).toUpperCase()}`;
const hex = (i: number) => Math.imul(mixed(i), 40503).toString(16).padStart(8, "0").slice(-8);

/** needleEntry is syntheticEntry with the rare values people look for: an email, an order id, a nested route, a customer number, a reference in the message. */
export function needleEntry(i: number): Record<string, unknown> {
  const e = syntheticEntry(i) as { actor: Record<string, unknown>; metadata: Record<string, unknown>; message: string; action: string };
  e.actor.email = `u${(Math.imul(i, 7919) % 200_000) >>> 0}@example.com`;
  e.metadata.order_id = `ord-${i.toString(36)}`;
  e.metadata.customer = (i * 31) % 300_007;
  e.metadata.http = { route: `/api/orders/${i % 5003}`, method: i % 3 ? "GET" : "POST" };
  e.message = `${e.message} ref ${needleCode(i)} span ${hex(i)}`;
  if (i % 5000 === 17) e.action = `refund.${i % 97}.issued`;
  return e;
}

export async function benchNeedles() {
  const dir = mkdtempSync(join(tmpdir(), "sluice-needles-"));
  const s = compose({ dataDir: dir, plans: new PlanTable(), adminToken: "bench", log: () => {}, ipRatePerMinute: -1, clock: () => T0 + SPAN_MS });
  try {
    const ws = await s.admin.createWorkspace({ name: "bench" });
    const tenant = { ws: ws.id, env: "production" as const };
    const key = (await s.admin.createKey(ws.id, { environment: "production", type: "rw" })).key;
    const ids = new IdGenerator();
    const plan = BUILT_IN_PLANS[3];
    const blocks = Math.ceil(N / BLOCK);
    const t0 = performance.now();
    for (let b = 0; b < blocks; b++) {
      const raws = Array.from({ length: Math.min(BLOCK, N - b * BLOCK) }, (_, i) => needleEntry(b * BLOCK + i));
      const { ms, ids: fresh } = ids.next(raws.length, T0 + Math.floor((b * SPAN_MS) / blocks));
      const entries = raws.map((r, i) => ({ ...checkEntry(r, i, plan).entry!, id: fresh[i] }) as unknown as Entry);
      await s.entries.append(tenant, ms, entries, -1);
    }
    await s.entries.settled();
    const loadSecs = (performance.now() - t0) / 1000;
    const diskMiB = statSync(join(dir, "sluice.mdb")).size / 2 ** 20;

    const post = async (body: Record<string, unknown>) => {
      const r = await app(s, key, body);
      if (r.status !== 200) throw new Error(`BUG: ${r.status} ${await r.text()}`);
      return { ids: ((await r.json()) as { id: string }[]).map((e) => e.id), next: [r.headers.get("x-next-cursor-id"), r.headers.get("x-next-cursor-ts")] };
    };
    const mid = Math.floor(N / 2) + 123;
    const cases: [string, string][] = [
      ["a rare email (actor.email=)", `actor.email="u${(Math.imul(mid, 7919) % 200_000) >>> 0}@example.com"`],
      ["one order id (metadata.order_id=)", `metadata.order_id="ord-${mid.toString(36)}"`],
      ["a nested path (metadata.http.route=)", `metadata.http.route="/api/orders/${mid % 5003}"`],
      ["a number (metadata.customer=)", `metadata.customer=${(mid * 31) % 300_007}`],
      ["a request id (context.request_id=)", `context.request_id="req-${mid}"`],
      ["a rare message substring (message~)", `message~"${needleCode(mid).slice(4)}"`],
      ["a rare hex substring, 6 of 16 letters (message~)", `message~"${hex(mid).slice(1, 7)}"`],
      ["a rare word", needleCode(mid).slice(3)],
      ["a rare action substring (action~)", `action~"fund.${(5000 * Math.floor(N / 10_000) + 17) % 97}.iss"`],
      ["a common JSON value (metadata.status_code=500)", "metadata.status_code=500"],
      ["a common user (actor.id=)", `actor.id="user-42"`],
    ];
    const rows: Record<string, string | number>[] = [];
    for (const [name, query] of cases) {
      const body = { query };
      const got = (await post(body)).ids;
      const want = reference(s, tenant, query);
      if (JSON.stringify(got) !== JSON.stringify(want)) throw new Error(`BUG: ${name} differs from the reference full scan`);
      const runs = async (f: () => Promise<unknown>, many: number) => {
        const t = performance.now();
        await f();
        return performance.now() - t > 300 ? 3 : many; // a query of seconds (a full scan of 10M) is timed three times
      };
      const page1 = await timeIt(() => post(body), await runs(() => post(body), 25));
      const scanOnce = () => Promise.resolve(engine(s, tenant, query, "range"));
      const fullScan = await timeIt(scanOnce, await runs(scanOnce, 5));
      // the deepest full page through the cursor, up to page 100
      let deep: Record<string, unknown> = body;
      let depth = 1;
      for (; depth < 100; depth++) {
        const { ids: page, next } = await post(deep);
        if (page.length < PAGE || !next[0]) break;
        const following = { query, cursorID: next[0], cursorTS: next[1] };
        if ((await post(following)).ids.length < PAGE) break;
        deep = following;
      }
      const deepest = depth > 1 ? await timeIt(() => post(deep), await runs(() => post(deep), 25)) : undefined;
      rows.push({
        query: name,
        "page 1 p50": page1.p50,
        "page 1 p95": page1.p95,
        "full scan p50": fullScan.p50,
        "deepest page": depth,
        "deepest p50": deepest ? deepest.p50 : "-",
        plan: engine(s, tenant, query, "chosen").plan,
        matches: got.length,
      });
    }
    return { entries: N, loadSecs, diskMiB, rows };
  } finally {
    await s.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

function app(s: ReturnType<typeof compose>, key: string, body: Record<string, unknown>) {
  return s.app.handle(
    new Request("http://localhost/api/v1/workspace/logs/query", {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    }),
  );
}

/** engine runs one page below HTTP, on the plan the planner chose or forced onto the full range scan. */
function engine(s: ReturnType<typeof compose>, tenant: { ws: string; env: "production" }, text: string, which: "chosen" | "range") {
  const query = parseQuery(text);
  const plan = planQuery(s.entries, tenant, query, { fromMs: 0, toMs: 8.64e15 });
  const candidate = which === "chosen" ? plan.chosen : plan.candidates.find((c) => c.index === "range")!;
  runCandidate(s.entries, tenant, query, plan.range, candidate, PAGE);
  return { plan: `${plan.chosen.index} (${plan.chosen.estimate} blocks)` };
}

/** reference answers the slow, obvious way: every entry through the reference matcher. */
function reference(s: ReturnType<typeof compose>, tenant: { ws: string; env: "production" }, text: string): string[] {
  const query = parseQuery(text);
  const out: string[] = [];
  for (const row of scan(s.entries, tenant, { fromMs: 0, toMs: 8.64e15 })) {
    if (matchQuery(query, row, "production")) out.push(row.entry.id);
    if (out.length === PAGE) break;
  }
  return out;
}

if (import.meta.main) {
  const r = await benchNeedles();
  console.log(
    `needle queries over ${r.entries.toLocaleString("en-US")} entries (loaded in ${r.loadSecs.toFixed(1)} s, ${r.diskMiB.toFixed(0)} MiB on disk), ms through app.handle`,
  );
  console.table(r.rows);
}
