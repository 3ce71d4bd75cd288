// Full-text chunks (fulltext-chunks.ts): a sealed segment's export is stored compressed and reads back exactly; a
// segment stored as text, as older data directories hold it, is still searched after a restart.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { openDatabases } from "../../../src/storage/db.ts";
import { chunkText, packChunk, type Chunk } from "../../../src/storage/indexes/fulltext-chunks.ts";
import { FullText } from "../../../src/storage/indexes/fulltext.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

test("a chunk's data reads back exactly, compressed or not: any text, short or long, any Unicode", () => {
  const text = fc.oneof(
    fc.string({ unit: "grapheme", maxLength: 200 }),
    fc.string({ unit: "binary", maxLength: 200 }),
    fc.string({ unit: "binary-ascii", minLength: 300, maxLength: 3000 }),
  );
  fc.assert(
    fc.property(text, fc.nat(5), (data, repeat) => {
      const whole = data.repeat(repeat + 1);
      expect(chunkText(packChunk("map", whole))).toBe(whole);
    }),
    { numRuns: 500 },
  );
  expect(chunkText(packChunk("map", "\ud800 lone"))).toBe("\ud800 lone"); // not well formed: kept as text
});

test("an export of words and document numbers is stored in a fraction of its text", () => {
  const data = JSON.stringify(Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`word${i % 977}x${i}`, [i % 200, (i * 7) % 200]])));
  const [, stored] = packChunk("map", data);
  expect(stored).toBeInstanceOf(Uint8Array);
  expect((stored as Uint8Array).length).toBeLessThan(data.length / 3);
});

test("sealed segments are stored compressed and searched after a restart; segments stored as text still are", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sluice-ft-chunks-"));
  dirs.push(dir);
  let dbs = openDatabases(dir, () => {});
  const blocks = Array.from({ length: 40 }, (_, b) => ({ ms: 1000 + b, firstId: `id${b}`, text: `block${b} common words ${"w".repeat(b + 3)}`, entries: 10 }));
  let fulltext = new FullText(dbs.fulltext, () => [], 100);
  for (const block of blocks) fulltext.add("ws", "development", block);
  await fulltext.settled();
  await fulltext.close();
  const range = { fromMs: 0, toMs: 1e13 };
  const stored = [...dbs.fulltext.getRange({ start: ["ws", "development", "c"], end: ["ws", "development", "c\u0000"] })];
  expect(stored.length).toBeGreaterThan(0);
  expect(stored.some(({ value }) => (value as Chunk)[1] instanceof Uint8Array)).toBe(true);

  const search = async (expected: number) => {
    await dbs.root.close();
    dbs = openDatabases(dir, () => {});
    fulltext = new FullText(dbs.fulltext, () => [], 100);
    expect([...fulltext.blocks("ws", "development", ["block7"], range)].map((r) => r.firstId)).toEqual(["id7"]);
    expect([...fulltext.blocks("ws", "development", ["common"], range)].length).toBe(expected);
    await fulltext.close();
  };
  await search(40);
  // as older code stored them: the data as text
  await dbs.fulltext.transaction(() => {
    for (const { key, value } of stored) dbs.fulltext.put(key, [(value as Chunk)[0], chunkText(value as Chunk)]);
  });
  expect(
    [...dbs.fulltext.getRange({ start: ["ws", "development", "c"], end: ["ws", "development", "c\u0000"] })].every(
      ({ value }) => typeof (value as Chunk)[1] === "string",
    ),
  ).toBe(true);
  await search(40);
  await dbs.root.close();
});
