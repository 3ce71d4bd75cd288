// numbered-text: a frame of messages as their shapes and numbers. A message's shape is its text with each run of
// digits that is its number's own text (no leading zero, at most 15 digits) replaced by \u0000; the runs' numbers are
// stored apart, column by column (a message's first run in column 0, its second in column 1, ...), each column as
// varints of its numbers or of their steps (number-column.ts). zstd finds a log line's repeated words but
// not that request 1041 follows 1040, and spends more on a random number's digits than on its bytes.
//
// The frame: NUMBERED_TEXT, then msgpack [shapes, counts, hows, numbers]. shapes: a compact text column (text-column.ts
// compactText) of the shapes; counts: each column's count of numbers; hows: how each column is written.
// A frame with a message holding \u0000, or with no number at all, stays a text column.
//
// A needle without a digit or \u0000 is found in a message exactly where it is found in its shape, so searches of
// words read the shapes as they are; a read of a message, or a search with a digit, reads the frame's texts.
import { copyOf, packr } from "./columns.ts";
import { NULL_BIT, WIDE, compactText, expandText, isCompactText, textHeadBytes, textPayload } from "./text-column.ts";
import { type How, isHow, putNumbers, readNumbers } from "./number-column.ts";
import { VarintReader } from "./varint.ts";

/** NUMBERED_TEXT starts a numbered frame; a text column starts with its flags, 0 or 1. */
const NUMBERED_TEXT = 0x44;
/** Digits of a run at most: its number and the steps between numbers stay whole numbers below 2^53. */
const MAX_DIGITS = 15;

/** encodeNumberedText stores a text column of n entries (text-column.ts encodeText) as its shapes and numbers, or undefined when that does not apply. */
export function encodeNumberedText(text: Uint8Array, n: number): Uint8Array | undefined {
  const taken = takeHoles(text, n, MAX_DIGITS);
  if (taken === undefined) return undefined;
  const numbers: number[] = [];
  const hows = taken.columns.map((column) => putNumbers(numbers, column));
  const packed = packr.pack([compactText(taken.shapes, n), taken.columns.map((c) => c.length), hows, new Uint8Array(numbers)]);
  const out = new Uint8Array(1 + packed.length);
  out[0] = NUMBERED_TEXT;
  out.set(packed, 1);
  return out;
}

/** isNumberedText tells whether a frame (decompressed) is shapes and numbers. */
export const isNumberedText = (bytes: Uint8Array): boolean => bytes[0] === NUMBERED_TEXT;

const damaged = (why: string) => new Error(`a frame of messages is damaged (${why}): the data directory is damaged; restore it from a backup`);

function unpack(bytes: Uint8Array, n: number): { shapes: Uint8Array; counts: number[]; hows: How[]; numbers: Uint8Array } {
  const [shapes, counts, hows, numbers] = packr.unpack(bytes.subarray(1)) as unknown[];
  const whole = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isSafeInteger(x) && x >= 0);
  const ways = (v: unknown): v is How[] => Array.isArray(v) && v.every(isHow);
  if (!(shapes instanceof Uint8Array) || !whole(counts) || !ways(hows) || counts.length !== hows.length || !(numbers instanceof Uint8Array))
    throw damaged("its shapes, counts or numbers are missing");
  return { shapes: expandText(shapes, n), counts, hows, numbers };
}

/** shapesOf is a frame of n entries' shapes as a text column: a numbered frame's shapes, else its texts. */
export const shapesOf = (bytes: Uint8Array, n: number): Uint8Array => (isNumberedText(bytes) ? unpack(bytes, n).shapes : textOf(bytes, n));

/** textOf is a frame of n entries as a text column (text-column.ts encodeText): a numbered frame's texts, a compact column's, a text column as it is. */
export function textOf(bytes: Uint8Array, n: number): Uint8Array {
  if (isCompactText(bytes)) return expandText(bytes, n);
  if (!isNumberedText(bytes)) return bytes;
  const { shapes, counts, hows, numbers } = unpack(bytes, n);
  const read = new VarintReader(numbers, "a frame of messages' numbers");
  const columns = counts.map((count, j) => readNumbers(read, count, hows[j], damaged));
  if (read.at !== numbers.length) throw damaged("its numbers do not add up to its counts");
  const text = fillHoles(shapes, n, columns);
  if (text === undefined) throw damaged("its shapes' holes do not match its numbers");
  return text;
}

/**
 * fillHoles makes a text column of one whose texts hold holes (byte 0): an entry's hole j becomes the decimal digits of
 * column j's next number, entry after entry; undefined when a column runs out or keeps numbers no hole takes.
 */
function fillHoles(bytes: Uint8Array, n: number, columns: readonly Float64Array[]): Uint8Array | undefined {
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
function takeHoles(bytes: Uint8Array, n: number, most: number): { shapes: Uint8Array; columns: number[][] } | undefined {
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
