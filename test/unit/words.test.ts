// words: full-text words are maximal runs of Unicode letters and digits, lowercased.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { words } from "../../src/words.ts";

const rows: [string, string, string[]][] = [
  ["punctuation and spaces split words", "Disk full! (sda1)", ["disk", "full", "sda1"]],
  ["underscores, dots and @ split words", "user_id@example.com", ["user", "id", "example", "com"]],
  ["letters of any script are word characters", "Größe 東京 Ωmega", ["größe", "東京", "ωmega"]],
  ["digits of any script are word characters", "٣٤ x²", ["٣٤", "x²"]],
  ["combining marks split words (they are neither letters nor digits)", "e\u0301x", ["e", "x"]],
  ["words are lowercased after splitting", "İSTANBUL", ["i̇stanbul"]],
  ["repeats are dropped, first appearance kept", "b a B A", ["b", "a"]],
  ["text without letters or digits has no words", "-- !! --", []],
  ["the empty text has no words", "", []],
];
for (const [rule, text, expected] of rows) test(rule, () => expect(words(text)).toEqual(expected));

describe("words: the fast paths (short ASCII text, and the hash table of long texts)", () => {
  const WORD = /[\p{L}\p{N}]+/gu;
  const byRegex = (t: string) => [...new Set([...t.matchAll(WORD)].map((m) => m[0].toLowerCase()))];
  const unit = fc.oneof(
    fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)),
    fc.constantFrom("é", "İ", "Σ", "😀", "١", "ß"),
  );
  test("splits exactly as maximal runs of Unicode letters and digits, lowercased (20,000 random strings)", () => {
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (t) => expect(words(t)).toEqual(byRegex(t))),
      { numRuns: 20_000 },
    );
  });
  test("two words of the same hash in a long text are both found (the table compares the words, not only their hashes)", () => {
    const text = `7yzlaa E6APAA 7YZLAA e6apaa ${"x ".repeat(600)}`; // FNV-1a 32-bit: both 747733645; over 1,024 characters
    expect(words(text)).toEqual(["7yzlaa", "e6apaa", "x"]);
  });
  test("finds every distinct word of long texts, thousands of them, however they repeat, whatever their case, and past a letter beyond ASCII", () => {
    const word = fc.oneof({ weight: 30, arbitrary: fc.stringMatching(/^[A-Za-z0-9]{1,6}$/) }, fc.constantFrom("été", "İx", "١٢", "ß"));
    const sep = fc.constantFrom(" ", "\n", ".", "-", "_", "  ", "/");
    const text = fc.array(fc.tuple(word, sep), { minLength: 400, maxLength: 4_000 }).map((parts) => parts.flat().join(""));
    fc.assert(
      fc.property(text, (t) => expect(words(t)).toEqual(byRegex(t))),
      { numRuns: 60 },
    );
  });
});
