// Block.sizeOf reads a stored block's entry count off its first bytes; it must equal the decoded size for every size.
import { expect, test } from "bun:test";
import { IdGenerator } from "../../../src/ids.ts";
import { Block, type Entry } from "../../../src/storage/format/block.ts";
import { encodeBlock } from "../../../src/storage/format/block-encode.ts";
import { packr } from "../../../src/storage/format/columns.ts";

const entry = (id: string): Entry => ({
  id,
  level: "info",
  action: "a",
  message: null,
  tags: [],
  clientMs: 0,
  actor: null,
  target: null,
  context: null,
  metadata: null,
});

test("sizeOf equals the decoded size for blocks of 1 to 1,000 entries (fixint, uint8 and uint16 counts)", () => {
  const ids = new IdGenerator();
  for (const n of [1, 2, 127, 128, 129, 255, 256, 257, 999, 1000]) {
    const value = encodeBlock(ids.next(n, Date.now()).ids.map(entry));
    expect({ n, size: Block.sizeOf(value) }).toEqual({ n, size: Block.decode(0, value).size });
  }
});

test("a value that does not start as a current block is decoded in full", () => {
  const older = packr.pack({ v: 4, n: 3, c: [packr.pack("x".repeat(108)), null, null, null, null, null, null] });
  expect(Block.sizeOf(older)).toBe(3);
  const other = packr.pack({ n: 7, v: 5, c: [] });
  expect(Block.sizeOf(other)).toBe(7);
});
