// Packed columns (packed.ts): a column of client times reads back exactly whatever its numbers, and whole
// milliseconds close together take a byte or less each.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { encodeFloat64, float64Reader } from "../../../src/storage/format/columns.ts";
import { packNumbers, packWhole, unpackWhole } from "../../../src/storage/format/packed.ts";

const readBack = (values: number[]) => {
  const read = float64Reader(unpackWhole(packNumbers(values), values.length));
  return values.map((_, i) => read(i));
};

test("a column of client times reads back every number exactly: whole, fractional, -0, far apart, in any order", () => {
  const number = fc.oneof(
    fc.integer({ min: -62135596800000, max: 253402300799999 }),
    fc.constantFrom(0, -0, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 52, -(2 ** 52), 8.64e15, -8.64e15),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
  );
  fc.assert(
    fc.property(fc.array(number, { minLength: 1, maxLength: 80 }), (values) => {
      const back = readBack(values);
      for (const [i, v] of values.entries()) expect(Object.is(back[i], v)).toBe(true);
    }),
    { numRuns: 500 },
  );
});

test("a column of whole milliseconds a few apart takes a byte or less an entry, a tenth of its float64s", () => {
  const start = Date.UTC(2026, 10, 28);
  const values = Array.from({ length: 1000 }, (_, i) => start + i * 37 + ((i * 7919) % 13));
  const packed = packNumbers(values);
  expect(packed.length).toBeLessThanOrEqual(1000);
  expect(packed.length * 10).toBeLessThan(packWhole(encodeFloat64(values)).length);
  expect(readBack(values)).toEqual(values);
});

test("a column of client times mixing steps of one byte and of several reads back exactly, and one cut short says it is damaged", () => {
  const values = [0, 5, 100_000, 100_003, -7, -6, 2 ** 40, 2 ** 40 + 1, 3];
  expect(readBack(values)).toEqual(values);
  // tag 5 (steps), then the steps packed plain: two steps for three entries
  expect(() => unpackWhole(new Uint8Array([5, 0, 2, 4]), 3)).toThrow("ends early");
});
