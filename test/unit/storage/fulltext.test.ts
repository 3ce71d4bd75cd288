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

test("a sealed segment loaded while more segments than MAX_LOADED are being persisted still answers its search", async () => {
  const fulltext = new FullText(dbs.fulltext, () => [], 1); // a segment a block
  const block = (b: number) => ({ ms: 1000 + b, firstId: `id${b}`, text: `word${b} common`, entries: 1 });
  for (let b = 0; b < 8; b++) fulltext.add("ws", "development", block(b));
  await fulltext.settled(); // segments 1–8 stored; the four oldest unloaded
  expect(fulltext.stats().loaded).toBe(4);

  // six seals in one turn: none is persisted yet, and none can be unloaded
  for (let b = 8; b < 14; b++) fulltext.add("ws", "development", block(b));
  const found = [...fulltext.blocks("ws", "development", ["word0"], { fromMs: 0, toMs: 1e13 })].map((r) => r.firstId);
  expect(found).toEqual(["id0"]);
  await fulltext.settled();
  expect(fulltext.stats().loaded).toBeLessThanOrEqual(4);
  await fulltext.close();
});
