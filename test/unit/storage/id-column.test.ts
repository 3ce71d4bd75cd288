// A block's id column (format 6): any ids read back as written, as runs of changes and random bytes or as text; columns
// written before runs (counted, spanned) still read.
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

test("ids of one write, as the server draws them, take a few bytes in all; re-keyed above another's and ids of another shape read back", () => {
  const { ids } = new IdGenerator().next(1000, Date.now());
  expect(readAll(ids)).toEqual(ids);
  expect(packIds(ids).length).toBeLessThan(40);
  const above = IdGenerator.above(ids[999], ids.slice(0, 500)).ids;
  expect(readAll(above)).toEqual(above);
  for (const odd of [["not-a-uuid"], [ids[0].toUpperCase()], [ids[0], IdGenerator.above(ids[999], [ids[0]]).ids[0].replace(/^./, "f")]]) {
    expect(readAll(odd.map((s) => s.padEnd(36, "x")))).toEqual(odd.map((s) => s.padEnd(36, "x")));
  }
});

test("ids one character off a lowercase UUID (a dash moved, a letter past f, a capital) read back as written (property)", () => {
  const { ids } = new IdGenerator().next(8, Date.now());
  const odd = fc.tuple(fc.integer({ min: 0, max: 35 }), fc.constantFrom("-", "g", "A", "F", "z", "0", "/", ":"));
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 7 }), odd, (which, [at, c]) => {
      const changed = ids.map((id, i) => (i === which ? id.slice(0, at) + c + id.slice(at + 1) : id));
      expect(readAll(changed)).toEqual(changed);
    }),
    { numRuns: 500 },
  );
});

test("ids of many milliseconds in any order, as a merged part holds them, read back: about 6 bytes each of one writer, 12 of two (property)", () => {
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
    [1, 6],
    [2, 12],
  ]) {
    const writers = Array.from({ length: count }, () => new IdGenerator());
    const ids = Array.from({ length: 1000 }, (_, i) => writers[i % count].next(1, Date.UTC(2026, 10, 28) + Math.floor(i / 3) * 250).ids[0]);
    expect(readAll(ids)).toEqual(ids);
    expect(packIds(ids).length).toBeLessThan(1000 * most);
  }
});

test("a column of ids cut short is refused with an error, never looped on", () => {
  const g = new IdGenerator();
  const ids = Array.from({ length: 1000 }, (_, i) => g.next(1, Date.UTC(2026, 10, 28) + i).ids[0]); // a run each: plain changes and random bytes
  const packed = packIds(ids);
  expect(packed[0]).toBe(6);
  for (const cut of [packed.subarray(0, packed.length - 300), packIds(ids.slice(0, 1)), packIds(ids.slice(0, 999))]) {
    const read = idsReader(Uint8Array.from(cut), ids.length, asText);
    expect(() => read(999)).toThrow("damaged");
  }
});

test("a single millisecond's ids of one write stored counted, as written before runs, still read back", () => {
  // ids.ts's layout: 6 bytes of millisecond, 6 of the first id's 48 bits, 4 random bytes an id, then each step as a varint
  const ids = ["019ac4a1-0000-7123-8456-789a00000001", "019ac4a1-0000-7123-8456-789b00000002", "019ac4a1-0000-7123-8456-789d00000003"];
  const counted = Uint8Array.from([3, ...Buffer.from("019ac4a1000071238456789a", "hex"), ...Buffer.from("000000010000000200000003", "hex"), 1, 2]);
  const read = idsReader(counted, 3, asText);
  expect([0, 1, 2].map(read)).toEqual(ids);
});

test("a damaged column of ids in runs, spanned or counted reads as an error or as ids, never hangs or crashes (fuzz)", () => {
  fc.assert(
    fc.property(fc.constantFrom(3, 4, 6), fc.uint8Array({ maxLength: 80 }), fc.integer({ min: 1, max: 20 }), (tag, tail, n) => {
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
