// Differential (contract §13): the same entries in a cluster and in one process give identical pages, page by page
// through the cursor, for a corpus of random queries, asked through every node of the cluster.
import { afterAll, beforeAll, expect, test } from "bun:test";
import fc from "fast-check";
import { partitionOf } from "../../src/cluster/names.ts";
import { startTestCluster, type TestCluster } from "../helpers/cluster.ts";
import { WS, entry, removeDir, startTestSluice, type TestSluice } from "../helpers/sluice.ts";

const LEVELS = ["debug", "info", "warn", "error", "fatal"];
const ACTIONS = ["user.login", "User.Login", "user.logout", "order.created", "payment.failed", "ÉTÉ.go"];
const WORDS = ["timeout", "disk", "full", "login", "ok", "straße", "retry", "8812-a", "σίσυφος"];
const TAGS = ["prod", "checkout", "x-1", "é", "B"];
const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);

const entryArb = fc.record({
  level: pick(LEVELS),
  action: pick(ACTIONS),
  message: fc.array(pick(WORDS), { minLength: 1, maxLength: 4 }).map((w) => w.join(" ")),
  tags: fc.uniqueArray(pick(TAGS), { maxLength: 2 }),
  clientTimestamp: fc.integer({ min: 0, max: 5000 }).map((d) => new Date(Date.UTC(2026, 10, 22, 10) + d).toISOString()),
  metadata: fc.option(fc.record({ status: pick([200, 404, 500, "500"]), customer: fc.integer({ min: 1, max: 4 }) }), { nil: undefined }),
  actor: fc.option(fc.record({ id: pick(["u1", "u2", "U1"]) }), { nil: undefined }),
});

/** queryArb draws queries of the language (contract §6) over the entries' vocabulary, so they often match. */
const termArb = fc.oneof(
  fc.array(pick(LEVELS), { minLength: 1, maxLength: 2 }).chain((ls) => pick(["=", "!="]).map((op) => `level${op}${ls.join(",")}`)),
  pick(ACTIONS).chain((a) => pick(["=", "!=", "~"]).map((op) => `action${op}"${a}"`)),
  pick(["login", "user*", "*go", "PAY"]).map((v) => `action~"${v}"`),
  pick(WORDS),
  pick(WORDS).map((w) => `message@"${w}"`),
  pick(["8812", "ss", "out"]).map((w) => `message~"${w}"`),
  pick([...TAGS, "null"]).chain((t) => pick(["=", "!="]).map((op) => `tag${op}${t}`)),
  pick(["200", "500", "404"]).chain((v) => pick(["=", "!=", ">=", "<"]).map((op) => `metadata.status${op}${v}`)),
  pick(["1", "3"]).chain((v) => pick(["=", ">", "<="]).map((op) => `metadata.customer${op}${v}`)),
  pick(["u1", "null"]).chain((v) => pick(["=", "!="]).map((op) => `actor.id${op}${v}`)),
);
const queryArb = fc.array(termArb, { minLength: 0, maxLength: 3 }).map((terms) => terms.join(" "));

let c: TestCluster;
let one: TestSluice;
let key: string;
let oneKey: string;

beforeAll(async () => {
  c = await startTestCluster();
  one = startTestSluice();
  const ws = await c.workspace();
  key = await ws.key("production", "rw");
  const entries = fc.sample(entryArb, { numRuns: 600, seed: 25 });
  for (let i = 0; i < entries.length; i += 50) {
    const r = await c.call((i / 50) % 3, "POST", `${WS}/logs/bulk`, { key, body: entries.slice(i, i + 50) });
    expect(r.status).toBe(201);
  }
  for (let i = 0; i < 20; i++) expect((await c.call(i % 3, "POST", `${WS}/logs`, { key, body: entry({ message: `single ${i} timeout` }) })).status).toBe(201);
  // the single process gets the very rows a copy holds (same ids and server times), block by block
  const p = partitionOf(ws.id, c.nodes[0].settings.partitions);
  await c.call(0, "GET", `${WS}/logs`, { key }); // a read: the copies have applied every write above
  const copy = c.nodes.map((n) => n.copyOf(p)).find((x) => x !== undefined)!;
  expect(await copy.reached((await c.nodes[0].link.lastSeq(p)) ?? 0, 10_000)).toBe(true);
  const mine = await one.workspace();
  oneKey = await mine.key("production", "rw");
  const from = { ws: ws.id, env: "production" as const };
  for (const ref of [...copy.sluice.entries.blocks(from, { fromMs: 0, toMs: 8.64e15 })].reverse()) {
    const block = copy.sluice.entries.readBlock(from, ref.ms, ref.firstId)!;
    await one.svc.entries.append({ ws: mine.id, env: "production" }, ref.ms, block.entries(), -1);
  }
}, 90_000);
afterAll(async () => {
  await c?.close();
  await one?.close();
  if (one) removeDir(one.dir);
}, 30_000);

/** pages asks a query page by page (at most 50 pages of 10) and returns every page's entries. */
async function pages(ask: (body: unknown) => Promise<Response>, query: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let cursor: Record<string, string> = {};
  for (let page = 0; page < 50; page++) {
    const r = await ask({ query, pageSize: 10, ...cursor });
    out.push({ status: r.status, body: await r.json() });
    const id = r.headers.get("x-next-cursor-id");
    if (!id) break;
    cursor = { cursorID: id, cursorTS: r.headers.get("x-next-cursor-ts")! };
  }
  return out;
}

test("the same entries in a cluster and in one process give identical pages for random queries, through every node", async () => {
  const queries = ["", ...fc.sample(queryArb, { numRuns: 60, seed: 13 })];
  let matched = 0;
  for (const [n, query] of queries.entries()) {
    const single = await pages((body) => one.call("POST", `${WS}/logs/query`, { key: oneKey, body }), query);
    const clustered = await pages((body) => c.call(n % 3, "POST", `${WS}/logs/query`, { key, body }), query);
    expect({ query, pages: clustered }).toEqual({ query, pages: single });
    if (((single[0] as { body: unknown[] }).body?.length ?? 0) > 0) matched++;
  }
  expect(matched).toBeGreaterThan(20); // the corpus is not vacuous
}, 120_000);
