// numbered-text: a frame of messages as their shapes and numbers. A message's shape is its text with each run of
// digits that is its number's own text (no leading zero, at most 15 digits) replaced by \u0000; the runs' numbers are
// stored apart, column by column (a message's first run in column 0, its second in column 1, ...), each column as
// varints of its numbers or of their steps (number-column.ts). zstd finds a log line's repeated words but
// not that request 1041 follows 1040, and spends more on a random number's digits than on its bytes.
//
// The frame: NUMBERED_TEXT, then msgpack [shapes, counts, hows, numbers]. shapes: a compact text column (columns.ts
// compactText) of the shapes; counts: each column's count of numbers; hows: how each column is written.
// A frame with a message holding \u0000, or with no number at all, stays a text column.
//
// A needle without a digit or \u0000 is found in a message exactly where it is found in its shape, so searches of
// words read the shapes as they are; a read of a message, or a search with a digit, reads the frame's texts.
import { compactText, expandText, fillHoles, isCompactText, packr, takeHoles } from "./columns.ts";
import { type How, isHow, putNumbers, readNumbers } from "./number-column.ts";
import { VarintReader } from "./varint.ts";

/** NUMBERED_TEXT starts a numbered frame; a text column starts with its flags, 0 or 1. */
const NUMBERED_TEXT = 0x44;
/** Digits of a run at most: its number and the steps between numbers stay whole numbers below 2^53. */
const MAX_DIGITS = 15;

/** encodeNumberedText stores a text column of n entries (columns.ts encodeText) as its shapes and numbers, or undefined when that does not apply. */
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

/** textOf is a frame of n entries as a text column (columns.ts encodeText): a numbered frame's texts, a compact column's, a text column as it is. */
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
