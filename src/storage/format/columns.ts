// columns: what every column encoding shares (block format v5), and the float64 column. Each column is read one
// entry at a time: a page of 50 reads 50 entries of a 1,000-entry block, so it decodes 50 values, not 1,000.
//   text       message, objects (text-column.ts; searched in place by text-search.ts)
//   dict       level, action, and dict list: tags (dict-column.ts)
//   float64    clientMs: float64s (every platform Bun runs on is little-endian)
// Typed arrays need aligned offsets and msgpack places a column anywhere, so readers copy the
// small offset and code arrays once and view the large text bytes where they are.
import { Packr } from "msgpackr";

// LMDB hands out private copies of values, so decoded byte strings may share them without copying
export const packr = new Packr({ useRecords: true, moreTypes: false, bundleStrings: false });

/** Reader gives entry i's value of one column. */
export type Reader<T> = (i: number) => T;

/** copyOf copies bytes to offset 0 of a buffer of their own, aligned for any typed array (Buffer's own slice would be a view). */
// through a plain view: slicing a Buffer makes a Buffer (its species), which costs Bun several times the copy
export const copyOf = (bytes: Uint8Array, start = 0, end = bytes.length): ArrayBuffer =>
  new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length).slice(start, end).buffer;

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
