// Full-text segments over HTTP (contract §5, §6, §8): searches reach sealed and active segments,
// survive a restart without rebuilding sealed segments, keep at most 4 sealed segments loaded,
// and forget entries the retention sweeper deleted, from every index. These look into one process's segments and
// store: the cluster suite leaves this file out (search right after writes: query-fulltext-fresh.test.ts).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Encoder, Index } from "flexsearch";
import { PlanTable } from "../../src/limits/plans.ts";
import { runCandidate } from "../../src/query/page.ts";
import { parseQuery } from "../../src/query/parser.ts";
import { planQuery } from "../../src/query/plan.ts";
import { words } from "../../src/words.ts";
import { decodeGroup, isGroup } from "../../src/storage/indexes/posting-groups.ts";
import { RetentionSweeper } from "../../src/storage/retention.ts";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

/** json reads a response body as the loosely typed JSON the assertions inspect. */
const json = (res: Response): Promise<any> => res.json();

const SEGMENT = 20; // entries per full-text segment
const MAX_LOADED = 4;
type Stats = ReturnType<TestSluice["svc"]["entries"]["fulltext"]["stats"]>;

async function ids(res: Response): Promise<string[]> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.map((e: { id: string }) => e.id);
}
const search = async (s: TestSluice, key: string, query: string) => ids(await s.call("POST", `${WS}/logs/query`, { key, body: { query, pageSize: 100 } }));
/**
 * viaFullText reads a query's first 100 entries through its full-text candidate, whichever plan the planner would
 * choose (planned as for explain, which counts full text also where the word filters answer the read).
 */
function viaFullText(s: TestSluice, ws: string, query: string): string[] {
  const q = parseQuery(query);
  const tenant = { ws, env: "development" as const };
  const plan = planQuery(s.svc.entries, tenant, q, { fromMs: 0, toMs: 8.64e15 }, true);
  const fulltext = plan.candidates.find((c) => c.index === "fulltext");
  expect(fulltext).toBeDefined();
  return runCandidate(s.svc.entries, tenant, q, plan.range, fulltext!, 100).rows.map((r) => r.entry.id);
}

describe("sealed and active segments, across a restart", () => {
  let s: TestSluice;
  let key: string;
  let wsId: string;
  const bulks: string[][] = []; // ids per bulk, input order
  const singles: string[] = [];
  let blocksWritten = 0;
  let before: Stats;
  const newest = (xs: string[]) => [...xs].reverse();
  // each query with the ids it must return, newest first
  const QUERIES: [string, () => string[]][] = [
    ["w0", () => newest(bulks[0])],
    ["message@w7", () => newest(bulks[7])],
    ["single1", () => [singles[1]]],
    ['message@"w3 common"', () => newest(bulks[3])],
    ["message@w1,single2", () => [singles[2], ...newest(bulks[1])]],
    ["first common", () => newest(bulks.map((b) => b[0]))],
  ];

  beforeAll(async () => {
    s = startTestSluice(undefined, { segmentEntries: SEGMENT, ipRatePerMinute: -1 });
    const ws = await s.workspace();
    wsId = ws.id;
    key = await ws.key("development", "rw");
    for (let b = 0; b < 14; b++) {
      const body = Array.from({ length: 10 }, (_, i) => entry({ action: `job.step${i}`, message: `${i === 0 ? "first " : ""}w${b} common` }));
      const res = await s.call("POST", `${WS}/logs/bulk`, { key, body });
      expect(res.status).toBe(201);
      bulks.push((await json(res)).ids);
      blocksWritten++;
    }
    for (let i = 0; i < 3; i++) {
      const res = await s.call("POST", `${WS}/logs`, { key, body: entry({ message: `single${i} entry` }) });
      expect(res.status).toBe(201);
      singles.push((await json(res)).id);
      blocksWritten++;
    }
    await s.svc.entries.fulltext.settled(); // the sealed segments are persisted (and so may be unloaded)
    before = s.svc.entries.fulltext.stats();
  });
  afterAll(async () => {
    await s.close();
    removeDir(s.dir);
  });

  test("writing 170 entries with 20 per segment sealed more than 4 segments and left some blocks active", () => {
    expect(before.sealed).toBeGreaterThan(MAX_LOADED);
    expect(before.activeBlocks).toBeGreaterThan(0);
    expect(before.activeBlocks).toBeLessThan(blocksWritten);
    expect(before.loaded).toBeLessThanOrEqual(MAX_LOADED);
  });

  test.each(QUERIES)("searches through the full-text index find entries of sealed and active segments: %s", async (q, want) => {
    expect(viaFullText(s, wsId, q)).toEqual(want());
    expect(await search(s, key, q)).toEqual(want());
  });

  describe("after a restart on the same directory", () => {
    beforeAll(async () => {
      await s.svc.entries.fulltext.settled();
      await s.close();
      s = startTestSluice(s.dir, { segmentEntries: SEGMENT, ipRatePerMinute: -1 });
      expect(s.svc.entries.fulltext.stats()).toMatchObject({ sealed: 0, loaded: 0, rebuiltBlocks: 0 });
    });

    test.each(QUERIES)("the same search gives the same ids: %s", async (q, want) => {
      expect(viaFullText(s, wsId, q)).toEqual(want());
      expect(await search(s, key, q)).toEqual(want());
    });

    test("the sealed segments are the same, and only the active segment's blocks were rebuilt", async () => {
      await search(s, key, "w0");
      const after = s.svc.entries.fulltext.stats();
      expect(after.sealed).toBe(before.sealed);
      expect({ activeBlocks: after.activeBlocks, activeEntries: after.activeEntries }).toEqual({
        activeBlocks: before.activeBlocks,
        activeEntries: before.activeEntries,
      });
      expect(after.rebuiltBlocks).toBe(before.activeBlocks);
      expect(after.rebuiltBlocks).toBeLessThan(blocksWritten);
    });

    test("at most 4 sealed segments are loaded while paging a search across all of them", async () => {
      const seen: string[] = [];
      let cursor: Record<string, string> = {};
      for (let page = 0; page < 50; page++) {
        const res = await s.call("POST", `${WS}/logs/query`, { key, body: { query: "common", pageSize: 10, ...cursor } });
        seen.push(...(await ids(res)));
        expect(s.svc.entries.fulltext.stats().loaded).toBeLessThanOrEqual(MAX_LOADED);
        const next = res.headers.get("x-next-cursor-id");
        if (next === null) break;
        cursor = { cursorID: next, cursorTS: res.headers.get("x-next-cursor-ts")! };
      }
      expect(seen).toEqual(newest(bulks.flat()));
      const everyBulk = await search(s, key, "first");
      expect(everyBulk).toEqual(newest(bulks.map((b) => b[0])));
      expect(s.svc.entries.fulltext.stats().loaded).toBeLessThanOrEqual(MAX_LOADED);
    });

    test("writes after the restart seal new segments without overwriting the old ones", async () => {
      const more: string[][] = [];
      for (let b = 0; b < 4; b++) {
        const res = await s.call("POST", `${WS}/logs/bulk`, { key, body: Array.from({ length: 10 }, () => entry({ message: `late${b} common` })) });
        expect(res.status).toBe(201);
        more.push((await json(res)).ids);
      }
      expect(s.svc.entries.fulltext.stats().sealed).toBeGreaterThan(before.sealed);
      expect(await search(s, key, "late2")).toEqual(newest(more[2]));
      for (const [q, want] of QUERIES) expect(await search(s, key, q)).toEqual(want());
    });
  });
});

describe("retention: swept entries are gone from every index", () => {
  const T0 = Date.parse("2026-11-01T08:00:00.000Z");
  const DAY = 86_400_000;
  let now = T0;
  let s: TestSluice;
  let ws: { id: string };
  let key: string;
  const old: string[] = [];
  const fresh: string[] = [];
  let lastOldMs = 0;

  const setPlan = async (plan: string) => expect((await s.admin("PATCH", `/workspaces/${ws.id}`, { plan })).status).toBe(200);
  // every stored (term, block) posting as the key a block of its own would have: a group value holds several
  const postingKeys = () =>
    [...s.dbs.postings.getRange({})]
      .filter(({ key }) => (key as unknown[])[0] === ws.id)
      .flatMap(({ key, value }) => {
        const k = key as unknown[];
        const v = value as Uint8Array;
        return isGroup(v) ? decodeGroup(k[4] as number, v, false).map((b) => [...k.slice(0, 4), b.ms, b.firstId]) : [k];
      });
  const segmentMetas = () =>
    [...s.dbs.fulltext.getRange({})]
      .filter(({ key: k }) => (k as unknown[])[0] === ws.id && (k as unknown[])[2] === "s")
      .map(({ value }) => value as { blocks: [number, string][] });
  // one query per index (and the scan), with what it finds among the old and the fresh entries
  const QUERIES = [
    "level=warn",
    "tag=old-tag",
    "action=legacy.op",
    "action~legacy",
    "action@legacy",
    "message@ancient",
    "ancient",
    "shared",
    "tag=both",
    "tag=new-tag",
    "modern",
    "level=info",
  ];
  const found = async () => {
    const out: Record<string, { old: number; fresh: number }> = {};
    for (const q of QUERIES) {
      const got = new Set(await search(s, key, q));
      out[q] = { old: old.filter((x) => got.has(x)).length, fresh: fresh.filter((x) => got.has(x)).length };
    }
    out.byId = { old: (await search(s, key, `id=${old[0]},${old[39]}`)).length, fresh: (await search(s, key, `id=${fresh[0]},${fresh[29]}`)).length };
    return out;
  };
  const OLD_ONLY = { old: 40, fresh: 0 };
  const FRESH_ONLY = { old: 0, fresh: 30 };
  const visibleBeforeSweep = {
    "level=warn": OLD_ONLY,
    "tag=old-tag": OLD_ONLY,
    "action=legacy.op": OLD_ONLY,
    "action~legacy": OLD_ONLY,
    "action@legacy": OLD_ONLY,
    "message@ancient": OLD_ONLY,
    ancient: OLD_ONLY,
    shared: { old: 40, fresh: 30 },
    "tag=both": { old: 40, fresh: 30 },
    "tag=new-tag": FRESH_ONLY,
    modern: FRESH_ONLY,
    "level=info": FRESH_ONLY,
    byId: { old: 2, fresh: 2 },
  };

  beforeAll(async () => {
    s = startTestSluice(undefined, { clock: () => now, segmentEntries: SEGMENT, ipRatePerMinute: -1 });
    const w = await s.workspace("free");
    ws = w;
    key = await w.key("development", "rw");
    const write = async (into: string[], body: Record<string, unknown>[]) => {
      const res = await s.call("POST", `${WS}/logs/bulk`, { key, body });
      expect(res.status).toBe(201);
      into.push(...(await json(res)).ids);
      now += 1;
    };
    for (let b = 0; b < 4; b++) {
      await write(
        old,
        Array.from({ length: 10 }, () => entry({ action: "legacy.op", level: "warn", message: "ancient shared record", tags: ["old-tag", "both"] })),
      );
    }
    lastOldMs = now - 1;
    now = T0 + 10 * DAY;
    for (let b = 0; b < 3; b++) {
      await write(
        fresh,
        Array.from({ length: 10 }, () => entry({ action: "current.op", level: "info", message: "modern shared record", tags: ["new-tag", "both"] })),
      );
    }
  });
  afterAll(async () => {
    await s.close();
    removeDir(s.dir);
  });

  test("past the 21-day horizon of the free plan, the sweeper deletes the old entries from the store, postings, full text and every search", async () => {
    now = lastOldMs + 21 * DAY + 1;
    const floor = now - 21 * DAY;
    // control: the entries exist, so widening the retention by a plan change would show them
    await setPlan("unlimited");
    expect(await found()).toEqual(visibleBeforeSweep);
    await s.svc.entries.postings.flush(); // postings are stored a batch at a time: store them to see their keys
    await s.svc.entries.fulltext.settled(); // and sealed segments are persisted as their worker exports them
    expect(postingKeys().some((k) => (k[4] as number) < floor)).toBe(true);
    const sealedBefore = segmentMetas().length;
    expect(segmentMetas().some((m) => m.blocks.every(([ms]) => ms < floor))).toBe(true);

    await setPlan("free");
    const sweeper = new RetentionSweeper(
      s.svc.entries,
      s.svc.meta,
      (ws, nowMs) => new PlanTable().retentionFloor(ws.plan, nowMs),
      () => now,
    );
    expect(await sweeper.sweep()).toBe(40);

    // posting keys of the swept blocks are gone; those of the fresh ones stay
    const keys = postingKeys();
    expect(keys.filter((k) => (k[4] as number) < floor)).toEqual([]);
    expect(keys.filter((k) => k[2] === "t" && k[3] === "old-tag")).toEqual([]);
    expect(keys.filter((k) => k[2] === "t" && k[3] === "new-tag")).toHaveLength(3);
    expect(old.every((x) => s.svc.entries.get({ ws: ws.id, env: "development" }, x) === undefined)).toBe(true);
    // full-text segments that held only swept blocks are dropped
    expect(segmentMetas().every((m) => m.blocks.some(([ms]) => ms >= floor))).toBe(true);
    expect(segmentMetas().length).toBeLessThan(sealedBefore);

    // even with the retention widened again, no index finds a swept entry; the fresh ones are all found
    await setPlan("unlimited");
    expect(await found()).toEqual({
      ...Object.fromEntries(Object.entries(visibleBeforeSweep).map(([q, v]) => [q, { old: 0, fresh: v.fresh }])),
      byId: { old: 0, fresh: 2 },
    });
    expect(viaFullText(s, ws.id, "ancient")).toEqual([]);
    expect((await s.call("GET", `${WS}/logs/${old[0]}`, { key })).status).toBe(404);
  });
});

test("a workspace environment's first block is indexed once, not again after the rebuild its first write triggers", async () => {
  const { startTestSluice: start, removeDir: remove, WS: ws, entry: make } = await import("../helpers/sluice.ts");
  const t = start(undefined, { segmentEntries: 1_000 });
  const key = await (await t.workspace()).key("development", "rw");
  expect((await t.call("POST", `${ws}/logs/bulk`, { key, body: [make({ message: "first" }), make({ message: "block" })] })).status).toBe(201);
  const stats = t.svc.entries.fulltext.stats();
  expect({ blocks: stats.activeBlocks, entries: stats.activeEntries }).toEqual({ blocks: 1, entries: 2 });
  await t.close();
  remove(t.dir);
});

describe("words longer than 1,024 characters (FlexSearch's Encoder dropped them until 2026-11-23)", () => {
  const long = (b: number) => String.fromCharCode(97 + b).repeat(1_100) + b; // letters and a digit: one word
  const message = (b: number, i: number) => (i === 3 ? `blob ${long(b)} end` : `short ${b}-${i} code${b}${i}4567`);
  /** writeLong writes 3 blocks of 10 entries (message(b, i)) and returns their ids */
  async function writeLong(t: TestSluice, key: string): Promise<string[][]> {
    const ids: string[][] = [];
    for (let b = 0; b < 3; b++) {
      const body = Array.from({ length: 10 }, (_, i) => entry({ message: message(b, i) }));
      const res = await t.call("POST", `${WS}/logs/bulk`, { key, body });
      expect(res.status).toBe(201);
      ids.push((await json(res)).ids);
    }
    return ids;
  }
  const expectFound = async (t: TestSluice, key: string, ws: string, ids: string[][]) => {
    for (let b = 0; b < 3; b++) {
      expect(viaFullText(t, ws, `message@"${long(b)}"`)).toEqual([ids[b][3]]);
      expect(await search(t, key, `message@"${long(b)}"`)).toEqual([ids[b][3]]);
      expect(await search(t, key, long(b))).toEqual([ids[b][3]]);
      expect(await search(t, key, `message@"code${b}54567"`)).toEqual([ids[b][5]]);
      expect(await search(t, key, `code${b}84567`)).toEqual([ids[b][8]]);
    }
  };

  test("are found in the active segment and in sealed ones, before and after a restart", async () => {
    let t = startTestSluice(undefined, { segmentEntries: SEGMENT });
    const ws = await t.workspace();
    const key = await ws.key("development", "rw");
    const ids = await writeLong(t, key);
    expect(t.svc.entries.fulltext.stats()).toMatchObject({ sealed: 1, activeBlocks: 1 });
    await expectFound(t, key, ws.id, ids);
    await t.svc.entries.fulltext.settled();
    await t.close();
    t = startTestSluice(t.dir, { segmentEntries: SEGMENT });
    await expectFound(t, key, ws.id, ids);
    await t.close();
    removeDir(t.dir);
  });

  test("a segment sealed by an older version, whose index lacks them, offers all its blocks for such a word, so the search stays exact", async () => {
    let t = startTestSluice(undefined, { segmentEntries: SEGMENT });
    const ws = await t.workspace();
    const key = await ws.key("development", "rw");
    const ids = await writeLong(t, key);
    await t.svc.entries.fulltext.settled();
    // rewrite sealed segment 1 (blocks 0 and 1) as the older version stored it: FlexSearch's Encoder, no longWords mark
    const db = t.dbs.fulltext;
    const meta = db.get([ws.id, "development", "s", 1]) as { blocks: unknown[]; longWords?: true };
    expect(meta.longWords).toBe(true);
    const old = new Index({
      tokenize: "strict",
      encoder: new Encoder({ normalize: false, dedupe: false, split: " ", cache: false, minlength: 1 }),
      resolution: 1,
      fastupdate: false,
      context: false,
    });
    for (let b = 0; b < 2; b++) old.add(b, words(["user.login", ...Array.from({ length: 10 }, (_, i) => message(b, i))].join("\n")).join(" "));
    expect(old.search(long(0))).toEqual([]); // the old index lacks the word
    expect(old.search("code054567")).toEqual([0]); // other words it finds as the new index does
    const chunks: [string, string][] = [];
    old.export((k: string, data: string) => void chunks.push([k, data]));
    await db.transaction(() => {
      for (const k of db.getKeys({ start: [ws.id, "development", "c", 1], end: [ws.id, "development", "c", 2] })) db.removeSync(k);
      for (const [i, c] of chunks.entries()) db.putSync([ws.id, "development", "c", 1, i], c);
      const { longWords: _, ...older } = meta;
      db.putSync([ws.id, "development", "s", 1], older);
    });
    await t.close();
    t = startTestSluice(t.dir, { segmentEntries: SEGMENT });
    expect(await search(t, key, "short")).toHaveLength(27); // the rewritten index still serves other words
    await expectFound(t, key, ws.id, ids);
    await t.close();
    removeDir(t.dir);
  });
});
