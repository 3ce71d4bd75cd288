// dict-column: columns of repeating strings. A dict column (level, action) stores the distinct values, then one code
// per entry; a dict list column (tags), the distinct values, each entry's count of codes (a byte each; written
// before: where each entry's codes start, a uint32 each, as when an entry has more than 255), then the codes.
import { copyOf, packr, type Reader } from "./columns.ts";

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
