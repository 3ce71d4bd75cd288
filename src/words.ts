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

// biome-ignore lint/suspicious/noControlCharactersInRegex: all of ASCII, control characters included
const ASCII = /^[\x00-\x7f]*$/;
/** isAscii tells whether text is all ASCII (where lowercasing goes character by character). */
export const isAscii = (text: string): boolean => ASCII.test(text);
const ASCII_WORD = /[a-z0-9]+/g;
const LONG_TEXT = 1024; // a block's text, where most words repeat: the hash table pays; a message's few words do not

/** addWords adds the words of text to a set; ASCII text takes a fast path with the same result. */
export function addWords(text: string, into: Set<string>): void {
  if (text.length >= LONG_TEXT) {
    if (!new AsciiWords().add(text, into)) addWordsUnicode(text, into);
    return;
  }
  if (!ASCII.test(text)) return addWordsUnicode(text, into); // letters and digits beyond ASCII: the full rule
  const found = text.toLowerCase().match(ASCII_WORD); // in ASCII, lowercasing is per character and keeps word boundaries
  if (found) for (const w of found) into.add(w);
}

function addWordsUnicode(text: string, into: Set<string>): void {
  for (const m of text.matchAll(WORD)) into.add(m[0].toLowerCase()); // split first: lowercasing can add marks (İ → i̇)
}

/**
 * AsciiWords finds the words of ASCII text in one pass of char codes. A word already seen is found by its
 * hash in an open-addressing table, so a repeated word (most of a block's) allocates no string.
 */
class AsciiWords {
  private hashes = new Int32Array(1024);
  private seen: (string | undefined)[] = new Array(1024);
  private count = 0;

  /** add adds text's words to the set, or stops at the first character beyond ASCII and returns false (the words added are words). */
  add(text: string, into: Set<string>): boolean {
    const n = text.length;
    let start = -1;
    let h = 0;
    for (let i = 0; i <= n; i++) {
      let c = i < n ? text.charCodeAt(i) : 0x20;
      if (c > 0x7f) return false;
      if (c >= 0x41 && c <= 0x5a) c |= 0x20; // A–Z: in ASCII lowercasing is per character
      if ((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39)) {
        if (start < 0) {
          start = i;
          h = 0x811c9dc5;
        }
        h = Math.imul(h ^ c, 0x01000193); // FNV-1a over the lowercased word
        continue;
      }
      if (start < 0) continue;
      const word = this.find(text, start, i, h);
      if (word !== undefined) into.add(word);
      start = -1;
    }
    return true;
  }

  /** find returns the word text[start, end) lowercased when it is new, undefined when it was seen. */
  private find(text: string, start: number, end: number, h: number): string | undefined {
    const mask = this.hashes.length - 1;
    for (let slot = h & mask; ; slot = (slot + 1) & mask) {
      const w = this.seen[slot];
      if (w === undefined) {
        const word = text.slice(start, end).toLowerCase();
        this.seen[slot] = word;
        this.hashes[slot] = h;
        if (++this.count * 2 > this.hashes.length) this.grow();
        return word;
      }
      if (this.hashes[slot] === h && sameWord(w, text, start, end)) return undefined;
    }
  }

  private grow(): void {
    const { hashes, seen } = this;
    this.hashes = new Int32Array(hashes.length * 2);
    this.seen = new Array(hashes.length * 2);
    const mask = this.hashes.length - 1;
    for (let i = 0; i < hashes.length; i++) {
      const w = seen[i];
      if (w === undefined) continue;
      let slot = hashes[i] & mask;
      while (this.seen[slot] !== undefined) slot = (slot + 1) & mask;
      this.seen[slot] = w;
      this.hashes[slot] = hashes[i];
    }
  }
}

/** sameWord tells whether the lowercase word w is text[start, end) lowercased. */
function sameWord(w: string, text: string, start: number, end: number): boolean {
  if (w.length !== end - start) return false;
  for (let j = 0; j < w.length; j++) {
    let c = text.charCodeAt(start + j);
    if (c >= 0x41 && c <= 0x5a) c |= 0x20;
    if (w.charCodeAt(j) !== c) return false;
  }
  return true;
}
