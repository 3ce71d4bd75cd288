// fulltext-encoder: the terms of a text are exactly those of the FlexSearch Encoder that built the sealed segments.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { Encoder } from "flexsearch";
import { documentTerms, encodeTerms, indexTerms, termsToIndex } from "../../../src/storage/indexes/fulltext-encoder.ts";

// the options the index used until 2026-11-23: segments sealed then hold these terms
const flexsearch = new Encoder({ normalize: false, dedupe: false, split: " ", cache: false, minlength: 1, maxlength: Number.MAX_SAFE_INTEGER });
const sorted = (terms: string[]) => [...new Set(terms)].sort();

const rows: [string, string, string[]][] = [
  ["a word without 3 digits in a row stays whole", "ab12cd x9", ["ab12cd", "x9"]],
  ["a run of 3+ digits leaves its word and is cut in triplets from the left", "port80800ok", ["port", "808", "00", "ok"]],
  ["repeats are dropped", "123123 123", ["123"]],
  ["digits beyond ASCII are not cut", "١٢٣٤٥", ["١٢٣٤٥"]],
];
for (const [rule, text, expected] of rows) test(rule, () => expect(sorted(encodeTerms(text))).toEqual(sorted(expected)));

test("the terms of any text of words are those of FlexSearch's Encoder with the index's old options (100,000 random texts)", () => {
  const unit = fc.constantFrom("a", "B", "0", "1", "2", "9", " ", " ", "é", "٣", "_", "x");
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 40 }), (text) =>
      expect(sorted(encodeTerms(text))).toEqual(sorted((flexsearch.encode as (text: string, dedupe: boolean) => string[])(text, true))),
    ),
    { numRuns: 100_000 },
  );
});

test("encodeTerms gives each term once", () => {
  fc.assert(
    fc.property(fc.string({ unit: fc.constantFrom("1", "2", "a", " "), maxLength: 60 }), (text) => {
      const terms = encodeTerms(text);
      expect(new Set(terms).size).toBe(terms.length);
    }),
  );
});

test("an add's terms of words (indexTerms) are those of the words joined by spaces, and pass encodeTerms as they are", () => {
  const word = fc.string({ unit: fc.constantFrom("a", "B", "0", "1", "9", "é", "٣", "x"), minLength: 1, maxLength: 14 });
  fc.assert(
    fc.property(fc.uniqueArray(word, { maxLength: 12 }), (words) => {
      const terms = indexTerms(words);
      expect(sorted(terms)).toEqual(sorted(encodeTerms(words.join(" "))));
      expect(encodeTerms(terms)).toBe(terms);
    }),
    { numRuns: 20_000 },
  );
});

test("a document's terms split where it is encoded are the terms the worker would index from its text", () => {
  fc.assert(
    fc.property(fc.array(fc.oneof(fc.string(), fc.string({ unit: "grapheme" }), fc.stringMatching(/^[a-z0-9 .\-\n]{0,40}$/)), { maxLength: 20 }), (parts) => {
      const text = parts.join("\n");
      expect(termsToIndex(documentTerms(text))).toEqual(termsToIndex(text));
    }),
  );
});
