// Exactness in time slices (contract §6): a read that pauses at every block, while other writes commit and held
// postings are stored during its pauses, returns exactly what the same read gives in one go, across cursor pages.
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { IdGenerator } from "../../src/ids.ts";
import type { Query, StringValue, Term } from "../../src/query/ast.ts";
import { runCandidate, runSliced } from "../../src/query/page.ts";
import { planQuery, type Candidate } from "../../src/query/plan.ts";
import type { Slice } from "../../src/query/slice.ts";
import { words } from "../../src/words.ts";
import type { Environment, Level } from "../../src/schema.ts";
import { openDatabases } from "../../src/storage/db.ts";
import { EntryStore, type Entry, type Row } from "../../src/storage/entries.ts";
import type { ScanRange } from "../../src/storage/keys.ts";
import { UsageStore } from "../../src/storage/usage.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-sliced-"));
const dbs = openDatabases(dir);
const store = new EntryStore(dbs, new UsageStore(dbs.usage), 12); // tiny full-text segments: some are sealed during reads
afterAll(async () => {
  await store.settled();
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const T0 = Date.UTC(2026, 10, 22, 10, 0, 0, 0);
const ENV: Environment = "development";
const LEVELS: Level[] = ["info", "warn", "error"];
const ACTIONS = ["user.login", "user.logout", "order.paid"];
const MESSAGES = [null, "timeout while connecting", "user login ok", "retry 3 of 5"];
const TAGS = ["a", "b", "c"];

const str = (text: string): StringValue => ({ kind: "string", text, pos: 0 });
const pick = <T>(xs: readonly T[]) => fc.constantFrom(...xs);
const some = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: 1, maxLength: 2 });

const entryArb = fc.record({ level: pick(LEVELS), action: pick(ACTIONS), message: pick(MESSAGES), tags: fc.uniqueArray(pick(TAGS), { maxLength: 2 }) });
const writeArb = fc.record({
  entries: fc.array(entryArb, { minLength: 1, maxLength: 6 }),
  writer: fc.integer({ min: 0, max: 1 }),
  dms: fc.integer({ min: 0, max: 6 }),
  postings: pick(["held", "held", "stored"] as const),
});
/** terms that each index answers, and some that only a scan does */
const termArb: fc.Arbitrary<Term> = fc.oneof(
  some(pick(LEVELS).map(str)).map((values) => ({ kind: "enum" as const, facet: "level" as const, op: "=" as const, values, pos: 0 })),
  some(pick(TAGS).map(str)).map((values) => ({ kind: "tag" as const, op: "=" as const, values, pos: 0 })),
  fc
    .tuple(pick(["=", "~"] as const), some(pick([...ACTIONS, "login", "order"]).map(str)))
    .map(([op, values]) => ({ kind: "text" as const, facet: "action" as const, op, values, pos: 0 })),
  pick(["timeout", "user login", "retry", "ok"]).map((text) => ({ kind: "free" as const, text, words: words(text), pos: 0 })),
  fc
    .tuple(pick(["~", "!~", "@"] as const), some(pick(["o 3 o", "login", "3 of", "timeout"]).map(str)))
    .map(([op, values]) => ({ kind: "text" as const, facet: "message" as const, op, values, pos: 0 })),
  some(pick(LEVELS).map(str)).map((values) => ({ kind: "enum" as const, facet: "level" as const, op: "!=" as const, values, pos: 0 })),
);
/** what happens during a pause of the read: nothing, a write after every entry read so far, or the held postings stored */
const duringArb = fc.array(pick(["nothing", "write", "store postings", "store postings in flight"] as const), { minLength: 1, maxLength: 4 });
const caseArb = fc.record({
  writes: fc.array(writeArb, { minLength: 1, maxLength: 8 }),
  terms: fc.array(termArb, { maxLength: 2 }),
  fromMs: fc.option(fc.integer({ min: T0 - 1, max: T0 + 7 }), { nil: undefined }),
  toMs: fc.option(fc.integer({ min: T0, max: T0 + 8 }), { nil: undefined }),
  pageSize: fc.integer({ min: 1, max: 7 }),
  during: duringArb,
});

let later = T0 + 1_000; // writes during a read land after every entry there was when it started
const laterIds = new IdGenerator();

/** pausing is a slice due at every check whose pauses do the case's actions in turn, then nothing. */
function pausing(ws: string, during: readonly string[]): Slice {
  let n = 0;
  return {
    due: () => true,
    async pause() {
      const action = during[n++];
      if (action === "write") {
        const { ms, ids } = laterIds.next(2, later++);
        const entries = ids.map(
          (id): Entry => ({
            id,
            level: "info",
            action: "user.login",
            message: "user login ok",
            tags: ["a"],
            clientMs: ms,
            actor: null,
            target: null,
            context: null,
            metadata: null,
          }),
        );
        await store.append({ ws: ws, env: ENV }, ms, entries, -1);
      } else if (action === "store postings") await store.postings.flush();
      else if (action === "store postings in flight") void store.postings.flush();
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

const key = (r: Row) => `${r.serverMs}/${r.entry.id}`;

/**
 * pages reads every page of a query through candidate k, in one go or in slices, and returns the entries in order;
 * planned as for explain, so that the candidates counted only for explain are run too.
 */
async function pages(ws: string, query: Query, base: ScanRange, pageSize: number, k: number, slice?: Slice): Promise<string[]> {
  const got: string[] = [];
  let range = base;
  for (let guard = 0; guard < 100; guard++) {
    const plan = planQuery(store, { ws: ws, env: ENV }, query, range, true);
    const candidate: Candidate = plan.candidates[Math.min(k, plan.candidates.length - 1)];
    const p = slice
      ? await runSliced(store, { ws: ws, env: ENV }, query, plan.range, candidate, pageSize, slice)
      : runCandidate(store, { ws: ws, env: ENV }, query, plan.range, candidate, pageSize);
    got.push(...p.rows.map(key));
    if (!p.more) break;
    const last = p.rows[p.rows.length - 1];
    range = { ...base, after: { ms: last.serverMs, id: last.entry.id } };
  }
  return got;
}

test("every plan, pausing at every block while writes commit and postings are stored, returns what it returns in one go (300 random cases)", async () => {
  const seen = new Map<string, number>();
  await fc.assert(
    fc.asyncProperty(caseArb, async (c) => {
      const ws = crypto.randomUUID();
      const writers = [new IdGenerator(), new IdGenerator()];
      for (const w of [...c.writes].sort((a, b) => a.dms - b.dms)) {
        const { ms, ids } = writers[w.writer].next(w.entries.length, T0 + w.dms);
        const entries = w.entries.map((e, i): Entry => ({ ...e, id: ids[i], clientMs: ms, actor: null, target: null, context: null, metadata: null }));
        await store.append({ ws: ws, env: ENV }, ms, entries, -1);
        if (w.postings === "stored") await store.postings.flush();
      }
      const query: Query = { terms: c.terms };
      const base: ScanRange = { fromMs: c.fromMs ?? 0, toMs: c.toMs ?? 8.64e15 };
      const plans = planQuery(store, { ws: ws, env: ENV }, query, base, true).candidates;
      for (let k = 0; k < plans.length; k++) {
        seen.set(plans[k].index, (seen.get(plans[k].index) ?? 0) + 1);
        const expected = await pages(ws, query, base, c.pageSize, k);
        const sliced = await pages(ws, query, base, c.pageSize, k, pausing(ws, c.during));
        expect({ plan: plans[k].index, ids: sliced }).toEqual({ plan: plans[k].index, ids: expected });
      }
    }),
    { numRuns: 300 },
  );
  console.log("candidate plans exercised:", JSON.stringify(Object.fromEntries(seen)));
  for (const index of ["range", "level", "tag", "action", "fulltext"])
    expect({ index, exercised: (seen.get(index) ?? 0) >= 20 }).toEqual({ index, exercised: true });
}, 120_000);
