// Column encodings (block format v5): every value reads back exactly, in any order, wherever msgpack placed the column.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { damagedCopies, readsOrRefuses } from "../../helpers/damaged.ts";
import { encodeFloat64, float64Reader, packr } from "../../../src/storage/format/columns.ts";
import { dictListReader, dictReader, encodeDict, encodeDictList } from "../../../src/storage/format/dict-column.ts";
import { compactText, encodeText, expandText, isCompactText, textReader } from "../../../src/storage/format/text-column.ts";
import { foldAscii } from "../../../src/storage/format/text-search.ts";

// msgpack hands a column back as a Buffer at any offset inside the block: read it from an odd one
const misaligned = (bytes: Uint8Array) => {
  const padded = new Uint8Array(bytes.length + 3);
  padded.set(bytes, 3);
  return Buffer.from(padded.buffer, 3, bytes.length);
};
// read back every entry in a shuffled order, twice (the second read comes from what the first kept)
const readAll = <T>(read: (i: number) => T, n: number, order: number[]) => {
  const out = new Array<T>(n);
  for (const i of [...order, ...order]) out[i] = read(i);
  return out;
};
const withOrder = <T>(values: fc.Arbitrary<T[]>) =>
  values.chain((vs) => fc.tuple(fc.constant(vs), fc.shuffledSubarray([...vs.keys()], { minLength: vs.length, maxLength: vs.length })));
const text = fc.string({ unit: "binary", maxLength: 40 }); // any code point, ASCII or not

test("a text column reads back every string, empty string and null exactly, one at a time or decoded whole", () => {
  fc.assert(
    fc.property(
      withOrder(fc.array(fc.option(fc.oneof(text, fc.string({ unit: "binary-ascii" })), { nil: null }), { minLength: 1, maxLength: 150 })),
      ([values, order]) => {
        expect(readAll(textReader(misaligned(encodeText(values)), values.length), values.length, order)).toEqual(values);
      },
    ),
  );
});

test("a text column keeps non-ASCII text after ASCII text and a null between them", () => {
  const values = ["plain", null, "", "café ☕ 𝄞", "ünïcödé", null, "last"];
  const read = textReader(encodeText(values), values.length);
  expect(values.map((_, i) => read(i))).toEqual(values);
});

test("a text column reads a lone surrogate as U+FFFD, never pairing it with its neighbour's", () => {
  const values = Array.from({ length: 100 }, (_, i) => (i % 2 ? "\udc00b" : "a\ud83d")); // joined, each pair would make one emoji
  const read = textReader(encodeText(values), values.length);
  const expected = values.map((v) => v.toWellFormed());
  expect(values.map((_, i) => read(i))).toEqual(expected); // past 64 reads, the rest come from one decode of the whole
  expect(expected[0]).toBe("a\ufffd");
});

test("a dictionary column reads back every value, repeated or not, whatever the count of values and of distinct ones", () => {
  // from 1 to 40 distinct values over up to 200 entries: codes of 1, 2 and 4 bits and of a byte, and counts on both sides of BITS_FROM
  const values = fc.integer({ min: 1, max: 40 }).chain((distinct) =>
    fc.array(
      fc.nat(distinct - 1).map((k) => (k % 5 === 4 ? `ü${k}` : `v${k}`)),
      { minLength: 1, maxLength: 200 },
    ),
  );
  fc.assert(
    fc.property(withOrder(values), ([values, order]) => {
      expect(readAll(dictReader(misaligned(encodeDict(values)), values.length), values.length, order)).toEqual(values);
    }),
  );
});

test("a dictionary-list column reads back every entry's list, empty lists included", () => {
  fc.assert(
    fc.property(
      withOrder(fc.array(fc.array(fc.oneof(fc.constantFrom("svc-1", "region-2"), text), { maxLength: 5 }), { minLength: 1, maxLength: 60 })),
      ([lists, order]) => {
        expect(readAll(dictListReader(misaligned(encodeDictList(lists)), lists.length), lists.length, order)).toEqual(lists);
      },
    ),
  );
});

test("a dictionary column of 1000 entries takes 1, 2 or 4 bits a code up to 2, 4 or 16 values, a byte up to 256, two bytes for 257", () => {
  const codeBytes = (values: string[]) => (packr.unpack(encodeDict(values)) as [string[], Uint8Array])[1].length;
  for (const [distinct, bytes] of [
    [2, 125],
    [3, 250],
    [4, 250],
    [5, 500],
    [16, 500],
    [17, 1000],
    [256, 1000],
    [257, 2000],
  ]) {
    const values = Array.from({ length: 1000 }, (_, i) => `v${i % distinct}`);
    expect(codeBytes(values)).toBe(bytes);
    expect(readAll(dictReader(misaligned(encodeDict(values)), 1000), 1000, [...values.keys()])).toEqual(values);
  }
  // fewer than 16 entries keep a byte a code: their stored length alone could not tell the widths apart
  expect(codeBytes(["a", "b", "a"])).toBe(3);
});

test("a dictionary column written with two-byte codes for few values (before one-byte codes) reads back", () => {
  const values = ["info", "warn", "info", "error"];
  const older = packr.pack([["info", "warn", "error"], new Uint8Array(new Uint16Array([0, 1, 0, 2]).buffer)]);
  expect(readAll(dictReader(misaligned(older), 4), 4, [3, 2, 1, 0])).toEqual(values);
  expect(() => dictReader(packr.pack([["a"], new Uint8Array(3)]), 2)).toThrow(/damaged/);
});

test("a dictionary-list column keeps each entry's count in a byte; one with starts as uint32s (written before, or past 255 tags) reads back", () => {
  const lists = [["a", "b"], [], ["b"], ["c", "a", "b"]];
  const [values, counts, codes] = packr.unpack(encodeDictList(lists)) as [string[], Uint8Array, Uint8Array];
  expect([...counts]).toEqual([2, 0, 1, 3]);
  const older = packr.pack([values, new Uint8Array(new Uint32Array([0, 2, 2, 3, 6]).buffer), codes]);
  expect(readAll(dictListReader(misaligned(older), 4), 4, [3, 0, 2, 1])).toEqual(lists);
  const long = [Array.from({ length: 300 }, (_, k) => `t${k}`), ["x"]];
  expect((packr.unpack(encodeDictList(long)) as Uint8Array[])[1].length).toBe(4 * 3);
  expect(readAll(dictListReader(misaligned(encodeDictList(long)), 2), 2, [1, 0])).toEqual(long);
});

test("a dictionary-list column with more than 65,536 distinct values reads back (four-byte codes)", () => {
  const lists = Array.from({ length: 1000 }, (_, i) => Array.from({ length: 70 }, (_, k) => `t${i}-${k}`));
  const read = dictListReader(misaligned(encodeDictList(lists)), lists.length);
  for (const i of [0, 500, 999]) expect(read(i)).toEqual(lists[i]);
});

test("a float64 column reads back every number", () => {
  fc.assert(
    fc.property(withOrder(fc.array(fc.integer({ min: -62135596800000, max: 253402300799999 }), { minLength: 1, maxLength: 60 })), ([values, order]) => {
      expect(readAll(float64Reader(misaligned(encodeFloat64(values))), values.length, order)).toEqual(values);
    }),
  );
});

test("foldAscii lowercases exactly the ASCII letters of any bytes, at any length and alignment", () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 70 }), fc.nat(3), (bytes, offset) => {
      const shifted = new Uint8Array(bytes.length + offset).subarray(offset);
      shifted.set(bytes);
      const want = bytes.map((c) => (c >= 0x41 && c <= 0x5a ? c | 0x20 : c));
      expect([...foldAscii(shifted)]).toEqual([...want]);
    }),
    { numRuns: 2000 },
  );
});

test("a compact text column gives back the text column it stores, byte for byte, and is smaller (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.option(fc.oneof(text, fc.string({ unit: "binary-ascii", maxLength: 300 })), { nil: null }), { minLength: 1, maxLength: 150 }),
      (values) => {
        const column = encodeText(values);
        const compact = compactText(misaligned(column), values.length);
        expect(isCompactText(compact)).toBe(true);
        expect(Buffer.from(expandText(misaligned(compact), values.length))).toEqual(Buffer.from(column));
        expect(compact.length).toBeLessThan(column.length);
      },
    ),
    { numRuns: 400 },
  );
});

test("a damaged compact text column reads as an error or as texts, never hangs or crashes (fuzz)", () => {
  const values = Array.from({ length: 40 }, (_, i) => (i % 9 === 4 ? null : i % 5 ? `line ${i}` : `ünï ${i}`));
  const good = compactText(encodeText(values), values.length);
  fc.assert(
    fc.property(damagedCopies(good, 2), (bytes) =>
      readsOrRefuses(() => {
        const read = textReader(expandText(bytes, values.length), values.length);
        for (let i = 0; i < values.length; i++) expect(read(i) === null || typeof read(i) === "string").toBe(true);
      }),
    ),
    { numRuns: 3_000 },
  );
});
