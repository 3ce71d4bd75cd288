// words: full-text word splitting shared by the `@` operator, free words and the full-text index.

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * words splits text into its full-text words: maximal runs of Unicode letters and digits,
 * each lowercased, without repeats, in order of first appearance.
 */
export function words(text: string): string[] {
  const seen = new Set<string>();
  addWords(text, seen);
  return [...seen];
}

const ASCII = /^[\x00-\x7f]*$/;
const ASCII_WORD = /[a-z0-9]+/g;

/** addWords adds the words of text to a set; ASCII text takes a fast path with the same result. */
export function addWords(text: string, into: Set<string>): void {
  if (!ASCII.test(text)) return addWordsUnicode(text, into); // letters and digits beyond ASCII: the full rule
  const found = text.toLowerCase().match(ASCII_WORD); // in ASCII, lowercasing is per character and keeps word boundaries
  if (found) for (const w of found) into.add(w);
}

function addWordsUnicode(text: string, into: Set<string>): void {
  for (const m of text.matchAll(WORD)) into.add(m[0].toLowerCase()); // split first: lowercasing can add marks (İ → i̇)
}
