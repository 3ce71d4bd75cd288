// columns: the encodings of a block's columns (block format v5), each read one entry at a time.
// A page of 50 reads 50 entries of a 1,000-entry block, so it decodes 50 values, not 1,000:
//   text       message, objects: a uint32 of flags, the uint32 end offsets in bytes (bit 31: null), unless
//              all is ASCII the end offsets in characters, then the UTF-8 bytes (all little-endian)
//   dict       level, action: the distinct values, then one code per entry
//   dict list  tags: the distinct values, each entry's count of codes (a byte each; written before: where each
//              entry's codes start, a uint32 each, as when an entry has more than 255), then the codes
//   float64    clientMs: float64s (every platform Bun runs on is little-endian)
// Typed arrays need aligned offsets and msgpack places a column anywhere, so readers copy the
// small offset and code arrays once and view the large text bytes where they are.
import { Packr } from "msgpackr";
import { VarintReader, varint } from "./varint.ts";

// LMDB hands out private copies of values, so decoded byte strings may share them without copying
export const packr = new Packr({ useRecords: true, moreTypes: false, bundleStrings: false });

/** Reader gives entry i's value of one column. */
export type Reader<T> = (i: number) => T;

const NULL_BIT = 0x80000000;
const WIDE = 1; // a text column's flag: not all ASCII, so character offsets follow the byte offsets
const encoder = new TextEncoder();
// a copy at offset 0 (aligned for any typed array); Buffer's own slice would be a view
// through a plain view: slicing a Buffer makes a Buffer (its species), which costs Bun several times the copy
const copyOf = (bytes: Uint8Array, start = 0, end = bytes.length): ArrayBuffer =>
  new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length).slice(start, end).buffer;

/** encodeText packs strings or nulls so that each decodes alone, and all of them in one go. */
export function encodeText(values: readonly (string | null)[]): Uint8Array {
  const n = values.length;
  const joined = values.join(""); // join writes null as ""
  const size = Buffer.byteLength(joined);
  const ascii = size === joined.length; // then byte offsets are character offsets too
  if (!ascii) return encodeWideText(values);
  if (size >= NULL_BIT) throw new Error(`BUG: a block's text column of ${size} bytes passes 2 GiB`);
  const out = new Uint8Array(4 * (1 + n) + size);
  const ends = new Uint32Array(out.buffer, 4, n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null) at += v.length;
    ends[i] = v === null ? at + NULL_BIT : at;
  }
  encoder.encodeInto(joined, out.subarray(4 * (1 + n)));
  return out;
}

// each string is encoded alone: joined, a lone surrogate at the end of one could pair with the next
function encodeWideText(values: readonly (string | null)[]): Uint8Array {
  const n = values.length;
  let size = 0;
  for (const v of values) if (v !== null) size += Buffer.byteLength(v);
  if (size >= NULL_BIT) throw new Error(`BUG: a block's text column of ${size} bytes passes 2 GiB`);
  const out = new Uint8Array(4 * (1 + 2 * n) + size);
  const head = new Uint32Array(out.buffer, 0, 1 + 2 * n);
  head[0] = WIDE;
  const payload = out.subarray(head.byteLength);
  let at = 0;
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null) {
      at += encoder.encodeInto(v, payload.subarray(at)).written;
      chars += v.length; // a lone surrogate decodes as U+FFFD: one character still
    }
    head[1 + i] = v === null ? at + NULL_BIT : at;
    head[1 + n + i] = chars;
  }
  return out;
}

/** joinText makes one column of encodeText from columns of consecutive entries (`sizes[k]` entries in `parts[k]`). */
export function joinText(parts: readonly Uint8Array[], sizes: readonly number[]): Uint8Array {
  const n = sizes.reduce((a, b) => a + b, 0);
  const wide = parts.some((p) => (p[0] & WIDE) !== 0);
  const payloads = parts.map((p, k) => textPayload(p, sizes[k]));
  const size = payloads.reduce((a, p) => a + p.length, 0);
  if (size >= NULL_BIT) throw new Error(`BUG: a block's text column of ${size} bytes passes 2 GiB`);
  const out = new Uint8Array(4 * (1 + (wide ? 2 : 1) * n) + size);
  const head = new Uint32Array(out.buffer, 0, wide ? 1 + 2 * n : 1 + n);
  head[0] = wide ? WIDE : 0;
  let at = 0; // entries so far
  let bytesAt = 0;
  let charsAt = 0;
  let payloadAt = head.byteLength;
  for (const [k, part] of parts.entries()) {
    const m = sizes[k];
    const partHead = new Uint32Array(copyOf(part, 0, textHeadBytes(part, m)));
    const partWide = (partHead[0] & WIDE) !== 0;
    for (let i = 0; i < m; i++) {
      const end = partHead[1 + i];
      head[1 + at + i] = (end % NULL_BIT) + bytesAt + (end >= NULL_BIT ? NULL_BIT : 0);
      if (wide) head[1 + n + at + i] = (partWide ? partHead[1 + m + i] : end % NULL_BIT) + charsAt;
    }
    out.set(payloads[k], payloadAt);
    payloadAt += payloads[k].length;
    bytesAt += payloads[k].length;
    charsAt = wide ? head[n + at + m] : bytesAt;
    at += m;
  }
  return out;
}

/** textReader reads a column of encodeText, decoding an entry's string when first asked for it. */
export function textReader(bytes: Uint8Array, n: number): Reader<string | null> {
  const wide = (bytes[0] & WIDE) !== 0;
  const head = new Uint32Array(copyOf(bytes, 0, textHeadBytes(bytes, n)));
  const ends = head.subarray(1, 1 + n); // byte offsets; bit 31 marks a null
  const charEnds = wide ? head.subarray(1 + n) : ends;
  const text = textPayload(bytes, n);
  const values: (string | null | undefined)[] = new Array(n);
  let decoded = 0;
  const decodeWhole = () => {
    const whole = text.toString("utf8");
    for (let i = 0; i < n; i++) values[i] ??= ends[i] >= NULL_BIT ? null : whole.slice(i === 0 ? 0 : charEnds[i - 1] % NULL_BIT, charEnds[i] % NULL_BIT);
  };
  return (i) => {
    let v = values[i];
    if (v === undefined) {
      if (++decoded === WHOLE_AFTER) decodeWhole();
      v = values[i] ??= ends[i] >= NULL_BIT ? null : text.toString("utf8", i === 0 ? 0 : ends[i - 1] % NULL_BIT, ends[i]);
    }
    return v;
  };
}

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

/** COMPACT starts a compact text column (compactText); a text column starts with its flags, 0 or 1. */
const COMPACT = 0x43;

/**
 * compactText stores a text column of n entries for the disk: COMPACT, its flags, each entry's byte length times two
 * plus one when it is null, then (not all ASCII) each entry's character length, all varints, then its bytes. The
 * end offsets it replaces are four bytes an entry that zstd keeps at about two and a half.
 */
export function compactText(bytes: Uint8Array, n: number): Uint8Array {
  const head = new Uint32Array(copyOf(bytes, 0, textHeadBytes(bytes, n)));
  const wide = (head[0] & WIDE) !== 0;
  const lengths: number[] = [COMPACT, head[0]];
  let last = 0;
  for (let i = 1; i <= n; i++) {
    const end = head[i] % NULL_BIT;
    varint(lengths, 2 * (end - last) + (head[i] >= NULL_BIT ? 1 : 0));
    last = end;
  }
  for (let i = 1, chars = 0; wide && i <= n; i++) {
    varint(lengths, head[n + i] - chars);
    chars = head[n + i];
  }
  const payload = textPayload(bytes, n);
  const out = new Uint8Array(lengths.length + payload.length);
  out.set(lengths);
  out.set(payload, lengths.length);
  return out;
}

/** isCompactText tells whether a column's bytes are compactText's. */
export const isCompactText = (bytes: Uint8Array): boolean => bytes[0] === COMPACT;

/** expandText gives back the text column of n entries that compactText stored. */
export function expandText(bytes: Uint8Array, n: number): Uint8Array {
  const flags = bytes[1];
  if (flags !== 0 && flags !== WIDE)
    throw new Error("a compact text column's flags are neither 0 nor 1: the data directory is damaged; restore it from a backup");
  const wide = flags === WIDE;
  const head = new Uint32Array(1 + (wide ? 2 : 1) * n);
  head[0] = flags;
  const read = new VarintReader(bytes.subarray(2), `a compact text column's ${n} lengths`);
  let end = 0;
  for (let i = 1; i <= n; i++) {
    const v = read.next();
    end += Math.floor(v / 2);
    if (end >= NULL_BIT) throw new Error("a compact text column's lengths pass 2 GiB: the data directory is damaged; restore it from a backup");
    head[i] = v % 2 === 1 ? end + NULL_BIT : end;
  }
  for (let i = 1, chars = 0; wide && i <= n; i++) head[n + i] = chars += read.next();
  const payload = bytes.subarray(2 + read.at);
  if (payload.length !== end)
    throw new Error("a compact text column's lengths do not add up to its bytes: the data directory is damaged; restore it from a backup");
  const out = new Uint8Array(head.byteLength + payload.length);
  out.set(new Uint8Array(head.buffer), 0);
  out.set(payload, head.byteLength);
  return out;
}

/**
 * fillHoles makes a text column of one whose texts hold holes (byte 0): an entry's hole j becomes the decimal digits of
 * column j's next number, entry after entry; undefined when a column runs out or keeps numbers no hole takes.
 */
export function fillHoles(bytes: Uint8Array, n: number, columns: readonly Float64Array[]): Uint8Array | undefined {
  const headBytes = textHeadBytes(bytes, n);
  const head = new Uint32Array(copyOf(bytes, 0, headBytes));
  const wide = (head[0] & WIDE) !== 0;
  const payload = textPayload(bytes, n);
  let room = payload.length;
  for (const column of columns) room += column.length * 16; // a minus and 15 digits at most
  const out = new Uint8Array(headBytes + room);
  const outHead = new Uint32Array(out.buffer, 0, head.length);
  outHead[0] = head[0];
  const next = new Array<number>(columns.length).fill(0);
  let at = headBytes;
  let added = 0; // bytes (and characters: holes and digits are one of each) the digits added so far
  let from = 0;
  for (let i = 0; i < n; i++) {
    const end = head[1 + i] % NULL_BIT;
    // byte by byte: an entry's runs between holes are short, and a view of each to copy cost more than the copy
    for (let j = 0; from < end; from++) {
      const b = payload[from];
      if (b !== 0) {
        out[at++] = b;
        continue;
      }
      const column = columns[j];
      if (column === undefined || next[j] >= column.length) return undefined;
      const digits = putDigits(out, at, column[next[j]++]);
      added += digits - at - 1;
      at = digits;
      j++;
    }
    outHead[1 + i] = head[1 + i] + added;
    if (wide) outHead[1 + n + i] = head[1 + n + i] + added;
  }
  if (next.some((used, j) => used !== columns[j].length)) return undefined;
  return out.subarray(0, at);
}

/**
 * takeHoles is fillHoles undone: a text column whose every run of digits that is its number's own text (no leading
 * zero, at most `most` digits) is a hole, with the numbers, an entry's run j in column j; undefined when a text
 * holds a hole's byte already or there is no such run.
 */
export function takeHoles(bytes: Uint8Array, n: number, most: number): { shapes: Uint8Array; columns: number[][] } | undefined {
  const headBytes = textHeadBytes(bytes, n);
  const head = new Uint32Array(copyOf(bytes, 0, headBytes));
  const wide = (head[0] & WIDE) !== 0;
  const payload = textPayload(bytes, n);
  const out = new Uint8Array(bytes.length);
  const outHead = new Uint32Array(out.buffer, 0, head.length);
  outHead[0] = head[0];
  const columns: number[][] = [];
  let at = headBytes;
  let taken = 0; // bytes (and characters) the holes took away so far
  let from = 0;
  for (let i = 0; i < n; i++) {
    const end = head[1 + i] % NULL_BIT;
    for (let j = 0; from < end; ) {
      const b = payload[from];
      if (b === 0) return undefined;
      if (b < 0x30 || b > 0x39) {
        out[at++] = b;
        from++;
        continue;
      }
      let q = from + 1;
      let value = b - 0x30;
      for (let c = payload[q]; q < end && c >= 0x30 && c <= 0x39; c = payload[++q]) value = value * 10 + c - 0x30;
      const digits = q - from;
      if (digits <= most && (digits === 1 || b !== 0x30)) {
        out[at++] = 0;
        (columns[j++] ??= []).push(value);
        taken += digits - 1;
      } else for (let k = from; k < q; k++) out[at++] = payload[k];
      from = q;
    }
    outHead[1 + i] = head[1 + i] - taken;
    if (wide) outHead[1 + n + i] = head[1 + n + i] - taken;
  }
  return columns.length === 0 ? undefined : { shapes: out.subarray(0, at), columns };
}

// putDigits writes a whole number's decimal digits (after a minus) at `at` and returns where they end
function putDigits(out: Uint8Array, at: number, value: number): number {
  if (value < 0) {
    out[at++] = 0x2d;
    value = -value;
  }
  if (value >= 0x80000000) {
    const text = String(value);
    for (let i = 0; i < text.length; i++) out[at++] = text.charCodeAt(i);
    return at;
  }
  let v = value | 0;
  let end = at + 1;
  for (let p = 10; p <= v && end - at < 10; p *= 10) end++;
  for (let i = end - 1; i >= at; i--) {
    const q = (v / 10) | 0;
    out[i] = 0x30 + v - q * 10;
    v = q;
  }
  return end;
}

// a text column's head: the flags, the byte end offsets and, when not all ASCII, the character end offsets
const textHeadBytes = (bytes: Uint8Array, n: number): number => 4 * (1 + ((bytes[0] & WIDE) !== 0 ? 2 : 1) * n);

// the UTF-8 bytes after the head, viewed where they are
function textPayload(bytes: Uint8Array, n: number): Buffer {
  const head = textHeadBytes(bytes, n);
  return Buffer.from(bytes.buffer, bytes.byteOffset + head, bytes.length - head);
}

// a read that wants many entries of a block (a scan) is served faster by one decode of the whole text
const WHOLE_AFTER = 64;

/** encodeDict packs repeating strings as their distinct values and one code per entry. */
export function encodeDict(values: readonly string[]): Uint8Array {
  const dict = new CodeTable();
  const codes = new Uint32Array(values.length);
  for (let i = 0; i < values.length; i++) codes[i] = dict.code(values[i]);
  return packr.pack([dict.values(), packCodes(codes, dict.size)]);
}

/** DictColumn is a column of encodeDict as it is stored: the distinct values and each entry's code. */
export interface DictColumn {
  values: string[];
  codes: Uint8Array | Uint16Array | Uint32Array;
}

/** dictColumn opens a column of encodeDict (counting reads the codes without making a string per entry). */
export function dictColumn(bytes: Uint8Array, n: number): DictColumn {
  const [values, packed] = packr.unpack(bytes) as [string[], Uint8Array];
  return { values, codes: unpackCodes(packed, n) };
}

/** dictReader reads a column of encodeDict. */
export function dictReader(bytes: Uint8Array, n: number): Reader<string> {
  const { values, codes } = dictColumn(bytes, n);
  return (i) => values[codes[i]];
}

/** encodeDictList packs a list of strings per entry (tags) as the distinct values, where each entry's codes start, and the codes. */
export function encodeDictList(lists: readonly (readonly string[])[]): Uint8Array {
  const dict = new CodeTable();
  const starts = new Uint32Array(lists.length + 1);
  const codes: number[] = [];
  let most = 0;
  for (let i = 0; i < lists.length; i++) {
    for (const v of lists[i]) codes.push(dict.code(v));
    starts[i + 1] = codes.length;
    most = Math.max(most, lists[i].length);
  }
  // each entry's count of codes, a byte each, compresses far better than where its codes start (4 bytes each)
  const counts = most <= 0xff ? Uint8Array.from(lists, (l) => l.length) : new Uint8Array(starts.buffer);
  return packr.pack([dict.values(), counts, packCodes(codes, dict.size)]);
}

/** DictListColumn is a column of encodeDictList as it is stored: the distinct values, where each entry's codes start, the codes. */
export interface DictListColumn extends DictColumn {
  starts: Uint32Array;
}

/** dictListColumn opens a column of encodeDictList. */
export function dictListColumn(bytes: Uint8Array, n: number): DictListColumn {
  const [values, packedStarts, packed] = packr.unpack(bytes) as [string[], Uint8Array, Uint8Array];
  let starts: Uint32Array;
  if (packedStarts.length === n) {
    starts = new Uint32Array(n + 1); // counts: one byte an entry
    for (let i = 0; i < n; i++) starts[i + 1] = starts[i] + packedStarts[i];
  } else if (packedStarts.length === 4 * (n + 1)) starts = new Uint32Array(copyOf(packedStarts));
  else throw new Error(`a tags column holds ${packedStarts.length} bytes of starts for ${n} entries: the data directory is damaged; restore it from a backup`);
  return { values, starts, codes: unpackCodes(packed, starts[n]) };
}

/** dictListReader reads a column of encodeDictList; each call gives a new array. */
export function dictListReader(bytes: Uint8Array, n: number): Reader<string[]> {
  const { values: distinct, starts, codes } = dictListColumn(bytes, n);
  return (i) => {
    const out = new Array<string>(starts[i + 1] - starts[i]);
    for (let k = 0; k < out.length; k++) out[k] = distinct[codes[starts[i] + k]];
    return out;
  };
}

/** encodeFloat64 packs numbers as float64s. */
export function encodeFloat64(values: readonly number[]): Uint8Array {
  return new Uint8Array(new Float64Array(values).buffer);
}

/** float64Reader reads a column of encodeFloat64. */
export function float64Reader(bytes: Uint8Array): Reader<number> {
  const values = float64Array(bytes);
  return (i) => values[i];
}

/** float64Array is a column of float64s as one array: in place when aligned, else copied. */
export function float64Array(bytes: Uint8Array): Float64Array {
  // a decompressed column is its own aligned buffer: read in place (a block's bytes live no longer than the block)
  return bytes.byteOffset % 8 === 0 ? new Float64Array(bytes.buffer, bytes.byteOffset, bytes.length / 8) : new Float64Array(copyOf(bytes));
}

/** CodeTable numbers distinct strings in order of first appearance (not storage/dictionary.ts, the stored actions). */
class CodeTable {
  private readonly index = new Map<string, number>();
  get size(): number {
    return this.index.size;
  }
  code(value: string): number {
    let code = this.index.get(value);
    if (code === undefined) this.index.set(value, (code = this.index.size));
    return code;
  }
  values(): string[] {
    return [...this.index.keys()];
  }
}

/**
 * packCodes stores codes in 1, 2 or 4 bits each, or 1, 2 or 4 bytes, as the distinct values need (before 1-byte
 * codes: 2 up to 65,536; before bits: whole bytes). Bits only from BITS_FROM codes on, so that the stored length
 * tells every width apart: ceil(n/8), ceil(n/4), ceil(n/2), n, 2n and 4n bytes all differ.
 */
export function packCodes(codes: ArrayLike<number>, distinct: number): Uint8Array {
  const n = codes.length;
  if (n >= BITS_FROM && distinct <= 16) {
    const bits = distinct <= 2 ? 1 : distinct <= 4 ? 2 : 4;
    const per = 8 / bits;
    const out = new Uint8Array(Math.ceil(n / per));
    for (let i = 0; i < n; i++) out[(i / per) | 0] |= codes[i] << ((i % per) * bits);
    return out;
  }
  if (distinct <= 0x100) return Uint8Array.from(codes);
  return new Uint8Array((distinct <= 0x10000 ? new Uint16Array(codes) : new Uint32Array(codes)).buffer);
}
const BITS_FROM = 16;

/** unpackCodes reads packCodes' codes; the width is the bytes a code, so the stored bytes say it, whichever rule wrote them. */
export function unpackCodes(bytes: Uint8Array, count: number): Uint8Array | Uint16Array | Uint32Array {
  if (count >= BITS_FROM && bytes.length < count) {
    const per = bytes.length === Math.ceil(count / 8) ? 8 : bytes.length === Math.ceil(count / 4) ? 4 : bytes.length === Math.ceil(count / 2) ? 2 : 0;
    if (per === 0)
      throw new Error(`a dictionary column holds ${bytes.length} bytes for ${count} codes: the data directory is damaged; restore it from a backup`);
    const bits = 8 / per;
    const mask = (1 << bits) - 1;
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i++) out[i] = (bytes[(i / per) | 0] >>> ((i % per) * bits)) & mask;
    return out;
  }
  const width = count === 0 ? 2 : bytes.length / count;
  if (width === 1) return bytes;
  if (width !== 2 && width !== 4)
    throw new Error(`a dictionary column holds ${bytes.length} bytes for ${count} codes: the data directory is damaged; restore it from a backup`);
  // read in place when aligned, as float64Reader does: a block's bytes live no longer than the block
  const [buffer, at] = bytes.byteOffset % width === 0 ? [bytes.buffer, bytes.byteOffset] : [copyOf(bytes), 0];
  return width === 2 ? new Uint16Array(buffer, at, count) : new Uint32Array(buffer, at, count);
}
