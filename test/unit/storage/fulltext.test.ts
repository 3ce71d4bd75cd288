// Full text (fulltext.ts): which sealed segments stay loaded, and that a search always reads the segment it asked for.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabases } from "../../../src/storage/db.ts";
import { FullText } from "../../../src/storage/indexes/fulltext.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-ft-"));
const dbs = openDatabases(dir, () => {});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

const block = (b: number) => ({ ms: 1000 + b, firstId: `id${b}`, text: `word${b} common`, entries: 1 });
const search = (fulltext: FullText, word: string, ws = "ws") =>
  [...fulltext.blocks(ws, "development", [word], { fromMs: 0, toMs: 1e13 })].map((r) => r.firstId);

test("a sealed segment is unloaded once persisted unless a search asked for it; searched ones stay, MAX_LOADED at most", async () => {
  const fulltext = new FullText(dbs.fulltext, () => [], 1); // a segment a block
  for (let b = 0; b < 8; b++) fulltext.add("other", "development", block(b));
  await fulltext.settled(); // segments 1–8 stored, none searched: none stays in memory
  expect(fulltext.stats().loaded).toBe(0);
  for (const b of [0, 1, 2, 3, 4, 5]) expect(search(fulltext, `word${b}`, "other")).toEqual([`id${b}`]);
  expect(fulltext.stats().loaded).toBe(4); // the four searched last
  for (let b = 8; b < 10; b++) fulltext.add("other", "development", block(b));
  expect(search(fulltext, "word8", "other")).toEqual(["id8"]); // searched while being persisted: it stays
  await fulltext.settled();
  expect(fulltext.stats().loaded).toBe(4);
  expect(search(fulltext, "common", "other").length).toBe(10); // and every segment still answers
  await fulltext.close();
});

test("a sealed segment loaded while more segments than MAX_LOADED are being persisted still answers its search", async () => {
  const fulltext = new FullText(dbs.fulltext, () => [], 1); // a segment a block
  for (let b = 0; b < 8; b++) fulltext.add("ws", "development", block(b));
  await fulltext.settled();

  // six seals in one turn: none is persisted yet, and none can be unloaded
  for (let b = 8; b < 14; b++) fulltext.add("ws", "development", block(b));
  expect(search(fulltext, "word0")).toEqual(["id0"]);
  await fulltext.settled();
  expect(fulltext.stats().loaded).toBeLessThanOrEqual(4);
  await fulltext.close();
});

test("a sealed segment that could not be persisted stays loaded and answers its searches until a restart rebuilds it", async () => {
  // the real database, whose commits fail as on a full disk
  const failing = new Proxy(dbs.fulltext, {
    get: (db, name) => (name === "transaction" ? () => Promise.reject(new Error("MDB_MAP_FULL")) : Reflect.get(db, name, db)),
  });
  const fulltext = new FullText(failing, () => [], 1);
  const error = console.error;
  console.error = () => {}; // the failure is logged: expected here
  try {
    for (let b = 0; b < 7; b++) fulltext.add("full", "development", block(b));
    await fulltext.settled();
  } finally {
    console.error = error;
  }
  expect(fulltext.stats().loaded).toBe(7); // past MAX_LOADED: none may go
  for (const b of [0, 3, 5]) expect(search(fulltext, `word${b}`, "full")).toEqual([`id${b}`]);
  expect(search(fulltext, "common", "full").length).toBe(7);
  await fulltext.close();
});
