// A block's id column (format 6): any ascending ids read back as written, counted or as text.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { IdGenerator } from "../../../src/ids.ts";
import { idsReader, packIds } from "../../../src/storage/format/id-column.ts";

const asText = (joined: Uint8Array) => {
  const s = Buffer.from(joined).toString("latin1");
  return (i: number) => s.slice(i * 36, (i + 1) * 36);
};
const readAll = (ids: string[]) => {
  const read = idsReader(packIds(ids), ids.length, asText);
  return ids.map((_, i) => read(i));
};
const hex = (n: number, digits: number) => n.toString(16).padStart(digits, "0");

test("ids of one millisecond with any 48-bit counts, increasing by any step, and any random bits read back (property)", () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 2 ** 48 - 1 }),
      fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })), { minLength: 1, maxLength: 400 }),
      (ms, parts) => {
        let high = 0;
        const ids = parts.map(([step, random]) => {
          high = Math.min(2 ** 48 - 1, high + step);
          const h = hex(high, 12);
          return `${hex(ms, 12).slice(0, 8)}-${hex(ms, 12).slice(8)}-${h.slice(0, 4)}-${h.slice(4, 8)}-${h.slice(8)}${hex(random, 8)}`;
        });
        ids.sort();
        expect(readAll(ids)).toEqual(ids);
      },
    ),
    { numRuns: 200 },
  );
});

test("ids as the server draws them, re-keyed above another's, take about 5 bytes each, and ids of another shape read back as text", () => {
  const { ids } = new IdGenerator().next(1000, Date.now());
  expect(readAll(ids)).toEqual(ids);
  expect(packIds(ids).length).toBeLessThan(1000 * 6);
  const above = IdGenerator.above(ids[999], ids.slice(0, 500)).ids;
  expect(readAll(above)).toEqual(above);
  for (const odd of [["not-a-uuid"], [ids[0].toUpperCase()], [ids[0], IdGenerator.above(ids[999], [ids[0]]).ids[0].replace(/^./, "f")]]) {
    expect(readAll(odd.map((s) => s.padEnd(36, "x")))).toEqual(odd.map((s) => s.padEnd(36, "x")));
  }
});

test("ids of many milliseconds in any order, as a merged part holds them, read back: about 8 bytes each of one writer, 12 of two (property)", () => {
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.integer({ min: 0, max: 2 ** 32 - 1 })), {
        minLength: 1,
        maxLength: 300,
      }),
      (parts) => {
        const ids = parts.map(([ms, high, random]) => {
          const m = hex(ms, 12);
          const h = hex(high, 12);
          return `${m.slice(0, 8)}-${m.slice(8)}-${h.slice(0, 4)}-${h.slice(4, 8)}-${h.slice(8)}${hex(random, 8)}`;
        });
        expect(readAll(ids)).toEqual(ids);
      },
    ),
    { numRuns: 300 },
  );
  // a server draws ids from one generator; a cluster's fronts each from their own, interleaved in a partition
  for (const [count, most] of [
    [1, 9],
    [2, 12],
  ]) {
    const writers = Array.from({ length: count }, () => new IdGenerator());
    const ids = Array.from({ length: 1000 }, (_, i) => writers[i % count].next(1, Date.UTC(2026, 10, 28) + Math.floor(i / 3) * 250).ids[0]);
    expect(readAll(ids)).toEqual(ids);
    expect(packIds(ids).length).toBeLessThan(1000 * most);
  }
});

test("a column of counted ids cut short is refused with an error, never looped on", () => {
  const { ids } = new IdGenerator().next(1000, Date.now());
  const packed = packIds(ids);
  expect(packed[0]).toBe(3); // counted: the steps come last
  const read = idsReader(packed.subarray(0, packed.length - 300), ids.length, asText);
  expect(() => read(999)).toThrow("damaged");
});

test("a damaged column of spanned or counted ids reads as an error or as ids, never hangs or crashes (fuzz)", () => {
  fc.assert(
    fc.property(fc.constantFrom(3, 4), fc.uint8Array({ maxLength: 80 }), fc.integer({ min: 1, max: 20 }), (tag, tail, n) => {
      const read = idsReader(new Uint8Array([tag, ...tail]), n, asText);
      for (let i = 0; i < n; i++) {
        try {
          expect(read(i)).toMatch(/^[0-9a-f-]*$/);
        } catch (e) {
          expect(e).toBeInstanceOf(Error);
        }
      }
    }),
    { numRuns: 2_000 },
  );
});
