// words: full-text word splitting shared by the `@` operator, free words and the full-text index.

const WORD = /[\p{L}\p{N}]+/gu;

/**
 * words splits text into its full-text words: maximal runs of Unicode letters and digits,
 * each lowercased, without repeats, in order of first appearance.
 */
export function words(text: string): string[] {
  const seen = new Set<string>();
  for (const m of text.matchAll(WORD)) seen.add(m[0].toLowerCase()); // split first: lowercasing can add marks (İ → i̇)
  return [...seen];
}
