// A frame of messages as shapes and numbers (numbered-text.ts): its texts come back byte for byte as the text column
// they would have been, a needle without a digit is found in the shapes exactly where it is in the texts, and a
// damaged frame is refused.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { damagedCopies, readsOrRefuses } from "../../helpers/damaged.ts";
import { encodeText, textReader } from "../../../src/storage/format/text-column.ts";
import { foldText, textEntriesFolding, textEntriesWith } from "../../../src/storage/format/text-search.ts";
import { encodeNumberedText, isNumberedText, shapesOf, textOf } from "../../../src/storage/format/numbered-text.ts";

// messages with runs of digits of every kind: numbers, leading zeros, too long, next to letters and non-ASCII
const digits = fc.oneof(
  fc.nat().map(String),
  fc.constantFrom("0", "007", "1234567890123456", "999999999999999", "00", "10"),
  fc.bigInt({ min: 0n, max: 10n ** 20n }).map(String),
);
const piece = fc.oneof(digits, fc.string({ unit: "binary", maxLength: 6 }), fc.constantFrom(" ", "-", ".", "é", "x", "😀", "\u0000"));
const message = fc.array(piece, { maxLength: 8 }).map((parts) => parts.join(""));
const numberedOf = (values: (string | null)[]) => encodeNumberedText(encodeText(values), values.length);
const frame = fc.array(fc.option(message, { nil: null }), { minLength: 1, maxLength: 80 });

test("a numbered frame's texts are the text column its messages make, byte for byte (property)", () => {
  fc.assert(
    fc.property(frame, (values) => {
      const numbered = numberedOf(values);
      // a run of digits that is its number's own text, of at most 15 digits
      const hasNumber = values.some((v) => v !== null && /(?<![0-9])(0|[1-9][0-9]{0,14})(?![0-9])/.test(v));
      const hasHole = values.some((v) => v?.includes("\u0000"));
      expect(numbered === undefined).toBe(hasHole || !hasNumber);
      if (numbered === undefined) return;
      expect(isNumberedText(numbered)).toBe(true);
      expect(Buffer.from(textOf(Buffer.from(numbered), values.length))).toEqual(Buffer.from(encodeText(values)));
      const read = textReader(textOf(Buffer.from(numbered), values.length), values.length);
      for (const [i, v] of values.entries()) expect(read(i)).toBe(v);
    }),
    { numRuns: 600 },
  );
});

test("a needle without a digit is found in a numbered frame's shapes in exactly the entries it is found in its texts (property)", () => {
  const needle = fc
    .oneof(fc.string({ unit: "binary", minLength: 1, maxLength: 4 }), fc.constantFrom(" ", "x", ".", "é", "-"))
    .filter((t) => !/[0-9]/.test(t) && !t.includes("\u0000"));
  fc.assert(
    fc.property(frame, needle, (values, t) => {
      const numbered = numberedOf(values);
      fc.pre(numbered !== undefined);
      const n = values.length;
      const utf8 = Buffer.from(t);
      expect(textEntriesWith(shapesOf(Buffer.from(numbered!), n), n, utf8)).toEqual(textEntriesWith(encodeText(values), n, utf8));
      const lowered = Buffer.from(t.toLowerCase());
      if (/^[\x20-\x7e]+$/.test(t))
        expect(textEntriesFolding(foldText(shapesOf(Buffer.from(numbered!), n), n), lowered)).toEqual(
          textEntriesFolding(foldText(encodeText(values), n), lowered),
        );
    }),
    { numRuns: 600 },
  );
});

test("request lines with their numbers apart compress to at most two thirds of their text", () => {
  const values = Array.from({ length: 512 }, (_, i) => `GET /orders/${9_000_000 + i} answered ${200 + (i % 3) * 100} after ${(i * 7919) % 997} ms`);
  const numbered = numberedOf(values)!;
  const zstd = (bytes: Uint8Array) => Bun.zstdCompressSync(bytes, { level: 3 }).length;
  expect(zstd(numbered)).toBeLessThan((zstd(encodeText(values)) * 2) / 3);
});

test("a damaged numbered frame reads as an error or as texts, never hangs or crashes (fuzz)", () => {
  const values = Array.from({ length: 30 }, (_, i) => (i % 7 === 3 ? null : `request ${1000 + i} took ${i * 13} ms, é ${i % 4}`));
  const good = numberedOf(values)!;
  fc.assert(
    fc.property(damagedCopies(good), (bytes) =>
      readsOrRefuses(() => {
        const read = textReader(textOf(bytes, values.length), values.length);
        for (let i = 0; i < values.length; i++) expect(read(i) === null || typeof read(i) === "string").toBe(true);
      }),
    ),
    { numRuns: 3_000 },
  );
});
