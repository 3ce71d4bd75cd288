// Block encoding: a block reads back exactly, and blocks written by earlier versions (v3) still read.
import { expect, test } from "bun:test";
import { Packr } from "msgpackr";
import { nextIds } from "../../../src/ids.ts";
import { Block, encodeBlock, type Entry } from "../../../src/storage/block.ts";

const entries = (n: number): Entry[] =>
  nextIds(n).ids.map((id, i) => ({
    id, level: i % 2 ? "info" : "error", action: `a.${i}`, message: i % 3 ? `m ${i}` : null, tags: [`t${i % 4}`], clientMs: 1_700_000_000_000 + i,
    actor: i % 5 ? null : { id: i }, target: null, context: null, metadata: i % 7 ? null : { deep: { x: [i] } },
  }));
const read = (b: Block) => Array.from({ length: b.size }, (_, i) => fields(b.entry(i)));
const fields = (e: Entry) => ({ id: e.id, level: e.level, action: e.action, message: e.message, tags: e.tags, clientMs: e.clientMs, actor: e.actor, target: e.target, context: e.context, metadata: e.metadata });

test("a block reads back every field of every entry, and finds each by id", () => {
  const sent = entries(1000);
  const block = Block.decode(0, encodeBlock(sent));
  expect(read(block)).toEqual(sent.map(fields));
  for (let i = 0; i < sent.length; i += 97) expect(block.indexOf(sent[i].id)).toBe(i);
});

test("a v3 block (ids as an array), as earlier versions wrote it, still reads", () => {
  const sent = entries(50);
  const packr = new Packr({ useRecords: true, moreTypes: false, bundleStrings: false });
  const col = (f: (e: Entry) => unknown) => packr.pack(sent.map(f));
  const v3 = packr.pack({
    v: 3, n: sent.length,
    c: [col((e) => e.id), col((e) => e.level), col((e) => e.action), col((e) => e.message), col((e) => e.tags), col((e) => e.clientMs),
      col((e) => (e.actor === null && e.metadata === null ? null : JSON.stringify([e.actor, e.target, e.context, e.metadata])))],
  });
  const block = Block.decode(0, v3);
  expect(read(block)).toEqual(sent.map(fields));
  expect(block.indexOf(sent[17].id)).toBe(17);
});
