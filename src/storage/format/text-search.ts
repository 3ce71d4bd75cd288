// text-search: which entries of a text column (text-column.ts) hold a needle, found in its bytes as they are stored,
// with or without ASCII case, no entry's string made.
import { copyOf } from "./columns.ts";
import { NULL_BIT, WIDE, textHeadBytes, textPayload } from "./text-column.ts";

/** textEntriesWith lists, ascending, the entries of a column of encodeText whose UTF-8 bytes include `needle`. */
export function textEntriesWith(bytes: Uint8Array, n: number, needle: Uint8Array): number[] {
  return entriesHolding(textPayload(bytes, n), new Uint32Array(copyOf(bytes, 4, 4 * (1 + n))), n, needle);
}

/** FoldedText is a text column's bytes with ASCII letters lowercased, for case-insensitive searches of ASCII needles. */
export interface FoldedText {
  folded: Buffer;
  ends: Uint32Array;
  /** the entries with a character beyond ASCII, ascending (a few lowercase to ASCII letters: the Kelvin sign to k) */
  wide: number[];
  /** `folded` lies in a buffer shared by every fold: it holds this one while no other fold came after (isFolded) */
  fold: number;
}

// the one buffer folds are made in: a read folds block after block, and allocating each fold cost as much as making it
let scratch = new Uint32Array(1 << 14);
let folds = 0;

/** isFolded tells whether a FoldedText's bytes are still in the shared buffer, no other fold having been made since. */
export const isFolded = (text: FoldedText): boolean => text.fold === folds;

/** foldText reads a column of encodeText for textEntriesFolding: once per block, however many needles search it. */
export function foldText(bytes: Uint8Array, n: number): FoldedText {
  const head = new Uint32Array(copyOf(bytes, 0, textHeadBytes(bytes, n)));
  const ends = head.subarray(1, 1 + n);
  const wide: number[] = [];
  if ((head[0] & WIDE) !== 0)
    for (let i = 0, bytesAt = 0, charsAt = 0; i < n; i++) {
      const bytesEnd = ends[i] % NULL_BIT;
      const charsEnd = head[1 + n + i];
      if (bytesEnd - bytesAt !== charsEnd - charsAt) wide.push(i); // more bytes than characters: beyond ASCII
      bytesAt = bytesEnd;
      charsAt = charsEnd;
    }
  const payload = textPayload(bytes, n);
  const words = (payload.length + 3) >>> 2;
  if (scratch.length < words) scratch = new Uint32Array(Math.max(words, 2 * scratch.length));
  return { folded: foldInto(payload, scratch), ends, wide, fold: ++folds };
}

/**
 * textEntriesFolding lists, ascending, the entries of a folded column whose text, lowercased, may include `lowered`
 * (lowercase ASCII): those whose bytes hold it with ASCII letters lowercased, and every entry beyond ASCII.
 */
export function textEntriesFolding(text: FoldedText, lowered: Uint8Array): number[] {
  const found = entriesHolding(text.folded, text.ends, text.ends.length, lowered);
  return text.wide.length === 0 ? found : [...new Set([...found, ...text.wide])].sort((a, b) => a - b);
}

/** foldAscii copies bytes with the ASCII letters lowercased, four at a time; every other byte stays as it is. */
export function foldAscii(bytes: Uint8Array): Buffer {
  return foldInto(bytes, new Uint32Array((bytes.length + 3) >>> 2));
}

// foldAscii into the start of `words`, which has room for the bytes rounded up to a whole word
function foldInto(bytes: Uint8Array, words: Uint32Array): Buffer {
  const n = (bytes.length + 3) >>> 2;
  const out = new Uint8Array(words.buffer, 0, n * 4);
  out.set(bytes);
  out.fill(0, bytes.length); // the last word's padding
  for (let i = 0; i < n; i++) {
    const x = words[i];
    const low = x & 0x7f7f7f7f; // per byte, + 0x3f reaches bit 7 from "A" up, + 0x25 from past "Z": no carry between bytes
    const upper = (low + 0x3f3f3f3f) & ~(low + 0x25252525) & ~x & 0x80808080;
    words[i] = x | (upper >>> 2);
  }
  return Buffer.from(words.buffer, 0, bytes.length);
}

// the entries (by their byte ends) that hold an occurrence of `needle` in `text`, ascending
function entriesHolding(text: Buffer, ends: Uint32Array, n: number, needle: Uint8Array): number[] {
  const out: number[] = [];
  let j = 0;
  for (let at = text.indexOf(needle); at >= 0; ) {
    while (j < n && ends[j] % NULL_BIT <= at) j++;
    if (j >= n) break;
    const end = ends[j] % NULL_BIT;
    // an occurrence that runs on into the next entry is no occurrence: look again one byte on
    if (at + needle.length > end) at = text.indexOf(needle, at + 1);
    else {
      out.push(j);
      at = text.indexOf(needle, end); // the next entry's occurrences start at its bytes
    }
  }
  return out;
}
