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

/** addWords adds the words of text to a set; ASCII text takes a fast path with the same result. */
export function addWords(text: string, into: Set<string>): void {
  let start = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c > 127) return addWordsUnicode(text, into); // letters and digits beyond ASCII: the full rule
    const wordChar = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
    if (wordChar) {
      if (start < 0) start = i;
    } else if (start >= 0) {
      into.add(text.slice(start, i).toLowerCase());
      start = -1;
    }
  }
  if (start >= 0) into.add(text.slice(start).toLowerCase());
}

function addWordsUnicode(text: string, into: Set<string>): void {
  for (const m of text.matchAll(WORD)) into.add(m[0].toLowerCase()); // split first: lowercasing can add marks (İ → i̇)
}
