// Held postings (storage/indexes/postings.ts): a block's level, tag and action postings wait in memory and are stored a
// batch of blocks at a time. An acknowledged entry is found through them at once, after they are stored, and
// after a crash that kept them from being stored; a clean stop stores them all.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabases } from "../../src/storage/db.ts";
import { decodeGroup, isGroup } from "../../src/storage/indexes/posting-groups.ts";
import { spawnServer } from "../helpers/process.ts";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

/** json reads a response body as the loosely typed JSON the assertions inspect. */
const json = (res: Response): Promise<any> => res.json();

const opened: TestSluice[] = [];
afterAll(async () => {
  for (const s of opened) removeDir(s.dir);
});

const QUERIES = ["tag=held-tag", "level=warn", "action=held.op", "action~held"];
/** found answers each query (through an index plan) with the ids it returns, and the index it chose */
async function found(s: TestSluice, key: string) {
  const out: Record<string, { index: string; ids: string[] }> = {};
  for (const query of QUERIES) {
    const res = await s.call("POST", `${WS}/logs/query`, { key, body: { query, pageSize: 100 } });
    expect(res.status).toBe(200);
    const plan = await json(await s.call("POST", `${WS}/logs/query`, { key, body: { query, explain: true } }));
    out[query] = { index: plan.plan.index, ids: (await json(res)).map((e: { id: string }) => e.id) };
  }
  return out;
}
const expected = (ids: string[]) => ({
  "tag=held-tag": { index: "tag", ids },
  "level=warn": { index: "level", ids },
  "action=held.op": { index: "action", ids },
  "action~held": { index: "action", ids },
});
/** stored counts the (term, block) postings stored for a workspace: a group value holds several blocks */
const stored = (s: TestSluice, ws: string) =>
  [...s.dbs.postings.getRange({})]
    .filter(({ key }) => (key as unknown[])[0] === ws)
    .reduce((n, { key, value }) => n + (isGroup(value as Uint8Array) ? decodeGroup((key as number[])[4], value as Uint8Array, false).length : 1), 0);
const marked = (s: TestSluice, ws: string) => [...s.dbs.unindexed.getKeys({})].filter((k) => (k as unknown[])[0] === ws).length;

async function setUp() {
  const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
  opened.push(s);
  const ws = await s.workspace();
  const key = await ws.key("development", "rw");
  const ids: string[] = [];
  for (let b = 0; b < 3; b++) {
    const res = await s.call("POST", `${WS}/logs/bulk`, {
      key,
      body: Array.from({ length: 20 }, (_, i) => entry({ level: "warn", action: "held.op", tags: ["held-tag", `n${i}`], message: `held ${b}/${i}` })),
    });
    expect(res.status).toBe(201);
    ids.push(...(await json(res)).ids);
  }
  // a plain entry beside them, so that every index plan has something to leave out
  expect((await s.call("POST", `${WS}/logs`, { key, body: entry({ level: "info", action: "other.op", tags: ["other"] }) })).status).toBe(201);
  return { s, ws: ws.id, key, newestFirst: [...ids].reverse() };
}

test("an acknowledged entry is found at once through its held postings, and again once a batch stores them and clears their marks", async () => {
  const { s, ws, key, newestFirst } = await setUp();
  expect({ stored: stored(s, ws), marked: marked(s, ws) }).toEqual({ stored: 0, marked: 4 }); // held: nothing stored yet
  expect(await found(s, key)).toEqual(expected(newestFirst));
  await s.svc.entries.postings.flush();
  expect(marked(s, ws)).toBe(0);
  expect(stored(s, ws)).toBeGreaterThan(0);
  expect(await found(s, key)).toEqual(expected(newestFirst));
  await s.close();
});

test("a flush of more postings than one event turn takes stores them all, over several transactions, and clears the marks only at the end", async () => {
  const s = startTestSluice(undefined, { ipRatePerMinute: -1 });
  opened.push(s);
  const ws = await s.workspace();
  const key = await ws.key("development", "rw");
  const tags = Array.from({ length: 3_000 }, (_, i) => `t${i}`); // 3,000 tag postings and more: several turns' worth
  const res = await s.call("POST", `${WS}/logs/bulk`, { key, body: tags.map((tag) => entry({ tags: [tag] })) });
  expect(res.status).toBe(201);
  const ids: string[] = (await json(res)).ids;
  let done = false;
  const flushing = s.svc.entries.postings.flush().then(() => (done = true));
  const partial: { stored: number; marked: number }[] = []; // what a crash in the middle of the flush would leave
  while (!done) {
    const n = stored(s, ws.id);
    if (n > 0 && n < 3_006) partial.push({ stored: n, marked: marked(s, ws.id) });
    await Bun.sleep(0);
  }
  await flushing;
  expect(partial.length).toBeGreaterThan(0); // it took several transactions
  expect(partial.filter((p) => p.marked !== 3)).toEqual([]); // and the marks stayed until the last
  expect({ marked: marked(s, ws.id), stored: stored(s, ws.id) }).toEqual({ marked: 0, stored: 3_000 + 3 * 2 }); // each block: a tag each, one level, one action
  for (const i of [0, 1_499, 2_999]) {
    const r = await s.call("POST", `${WS}/logs/query`, { key, body: { query: `tag=${tags[i]}` } });
    expect((await json(r)).map((e: { id: string }) => e.id)).toEqual([ids[i]]);
  }
  await s.close();
});

test("retention deletes blocks whose postings are still held: none of their postings or marks stays behind", async () => {
  const { s, ws } = await setUp();
  expect({ stored: stored(s, ws), marked: marked(s, ws) }).toEqual({ stored: 0, marked: 4 }); // all held
  const deleted = await s.svc.entries.deleteBefore({ ws: ws, env: "development" }, 8.64e15, 100); // every block is past the horizon
  expect(deleted).toBe(61);
  await s.svc.entries.postings.flush();
  expect({ stored: stored(s, ws), marked: marked(s, ws) }).toEqual({ stored: 0, marked: 0 });
  await s.close();
});

test("after a crash that kept held postings from being stored, a restart holds them again from the marks: every index finds every acknowledged entry", async () => {
  const { s, ws, key, newestFirst } = await setUp();
  expect(marked(s, ws)).toBe(4);
  await s.dbs.root.close(); // a crash: no clean stop, the postings were only in memory
  await s.svc.entries.postings.settled(); // a stop after storage went away ends at once: the marks are what counts
  const t = startTestSluice(s.dir, { ipRatePerMinute: -1 });
  expect(stored(t, ws)).toBe(0);
  expect(await found(t, key)).toEqual(expected(newestFirst));
  await t.close(); // a clean stop stores what is held
  const u = startTestSluice(s.dir, { ipRatePerMinute: -1 });
  expect({ marked: marked(u, ws), storedSome: stored(u, ws) > 0 }).toEqual({ marked: 0, storedSome: true });
  expect(await found(u, key)).toEqual(expected(newestFirst));
  await u.close();
});

test("SIGTERM stores the held postings before the server exits: the next start has no marks to recover", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-held-"));
  const server = await spawnServer(dir);
  const key = /API key \(shown only now\):\s+(\S+)/.exec(server.banner)![1];
  const res = await fetch(`${server.base}${WS}/logs/bulk`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": key },
    body: JSON.stringify(Array.from({ length: 50 }, (_, i) => entry({ tags: ["held-tag"], message: `m ${i}` }))),
  });
  expect(res.status).toBe(201);
  server.proc.kill("SIGTERM");
  expect(await server.exited).toBe(0);
  const dbs = openDatabases(dir);
  try {
    expect([...dbs.unindexed.getKeys({})]).toEqual([]);
    expect([...dbs.postings.getKeys({})].some((k) => (k as unknown[])[3] === "held-tag")).toBe(true);
  } finally {
    await dbs.root.close();
    removeDir(dir);
  }
});
