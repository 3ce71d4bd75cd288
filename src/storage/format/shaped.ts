// shaped: the objects column as shapes and leaves. Each entry's objects JSON text is split into its shape (the text
// with every string value, number, true and false replaced by \u0000) and those scalars' texts, its leaves. The
// leaves of one shape and place are stored side by side, so zstd sees columns of like values (ids beside ids,
// addresses beside addresses) where a row of JSON mixes them: about half the bytes on the standard mix.
//
// The column: SHAPED, then msgpack [shapes, codes, lengths, leaves]. codes: one per entry (0: no objects; s + 1:
// shape s), a byte each up to 255 shapes, else two or four. leaves: every leaf's UTF-8, ordered by shape, then place
// in the shape, then entry; lengths: each leaf's byte length as a varint. JSON writes control characters escaped,
// so \u0000 is never in a key; a text that holds one (never made by JSON.stringify) keeps its block in the text
// encoding.
//
// PLACED, then msgpack [shapes, codes, lengths, leaves, heads, numbers], is the same with some places stored apart,
// as a dictionary or as numbers (places.ts): heads has one head per place, shape after shape; `leaves` and `lengths`
// hold the leaves of the places whose head is 0, `numbers` the codes and numbers of the others.
import { packr } from "./columns.ts";
import { packCodes, unpackCodes } from "./dict-column.ts";
import { skipString } from "./object-path.ts";
import { VarintReader, varint } from "./varint.ts";
import { type Head, PlacedLeaves, digitsOf, placeHead } from "./places.ts";

/** SHAPED is the first byte of a shaped column; a column of text-column.ts encodeText starts with 0 or 1. */
const SHAPED = 0x53;
/** PLACED is the first byte of a shaped column with places stored apart. */
const PLACED = 0x4e;
const HOLE = "\u0000";

/** split cuts a JSON text into its shape and leaves (pushed on `leaves`), or undefined when it holds a hole. */
function split(text: string, leaves: string[]): string | undefined {
  if (text.includes(HOLE)) return undefined;
  let shape = "";
  let last = 0; // the text from here on is not in the shape yet
  for (let i = 0; i < text.length; ) {
    const end = leafEnd(text, i);
    if (end < 0) {
      i++; // brackets, commas, colons, null
      continue;
    }
    if (text.charCodeAt(end) === 0x3a) {
      i = end; // a key: part of the shape
      continue;
    }
    shape += text.slice(last, i) + HOLE;
    leaves.push(text.slice(i, end));
    last = i = end;
  }
  return shape + text.slice(last);
}

/** fits cuts a text along a known shape's parts (the shape cut at its holes), or tells that it does not fit. */
function fits(text: string, parts: readonly string[], leaves: string[]): boolean {
  let at = 0;
  for (let j = 0; ; j++) {
    if (!text.startsWith(parts[j], at)) return false;
    at += parts[j].length;
    if (j === parts.length - 1) return at === text.length;
    const end = leafEnd(text, at);
    if (end < 0) return false;
    leaves.push(text.slice(at, end));
    at = end;
  }
}

/** leafEnd is where a string, number, true or false starting at `at` ends, or -1 when none starts there. */
function leafEnd(text: string, at: number): number {
  const c = text.charCodeAt(at);
  if (c === 0x22) return skipString(text, at); // unclosed: the rest is one leaf, kept as it is
  if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
    let end = at + 1;
    while (end < text.length && isNumberUnit(text.charCodeAt(end))) end++;
    return end;
  }
  if (c === 0x74 && text.startsWith("true", at)) return at + 4;
  if (c === 0x66 && text.startsWith("false", at)) return at + 5;
  return -1;
}

const isNumberUnit = (c: number): boolean => (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b || c === 0x2e || c === 0x65 || c === 0x45;

/** encodeShaped packs objects texts (null: none) as a shaped column, or undefined when one of them does not split. */
export function encodeShaped(texts: readonly (string | null)[]): Uint8Array | undefined {
  const shapes = new Map<string, number>();
  const parts: string[][] = []; // each shape cut at its holes
  const codes = new Uint32Array(texts.length);
  const columns: string[][][] = []; // shape, place, entry
  let s = -1; // the last entry's shape: most entries of a block have their neighbour's
  for (let i = 0; i < texts.length; i++) {
    const text = texts[i];
    if (text === null) continue;
    let leaves: string[] = [];
    if (s < 0 || !fits(text, parts[s], leaves)) {
      leaves = [];
      const shape = split(text, leaves);
      if (shape === undefined) return undefined;
      s = shapes.get(shape) ?? -1;
      if (s < 0) {
        shapes.set(shape, (s = shapes.size));
        parts.push(shape.split(HOLE));
        columns.push(leaves.map(() => []));
      }
    }
    codes[i] = s + 1;
    for (let j = 0; j < leaves.length; j++) columns[s][j].push(leaves[j]);
  }
  const heads: Head[] = [];
  const numbers: number[] = [];
  const all: string[] = []; // the leaves stored as texts
  for (const places of columns)
    for (const leaves of places) {
      const head = placeHead(leaves, numbers);
      heads.push(head);
      if (head === 0) for (const leaf of leaves) all.push(leaf);
    }
  const joined = all.join("");
  const utf8 = Buffer.from(joined);
  const ascii = utf8.length === joined.length;
  const lengths: number[] = [];
  for (const leaf of all) varint(lengths, ascii ? leaf.length : Buffer.byteLength(leaf));
  const anyPlaced = heads.some((h) => h !== 0);
  const fields = [[...shapes.keys()], packCodes(codes, shapes.size + 1), new Uint8Array(lengths), utf8];
  const packed = packr.pack(anyPlaced ? [...fields, heads, new Uint8Array(numbers)] : fields);
  const out = new Uint8Array(1 + packed.length);
  out[0] = anyPlaced ? PLACED : SHAPED;
  out.set(packed, 1);
  return out;
}

/** isShaped tells whether a column's bytes (unpacked) are a shaped column. */
export const isShaped = (bytes: Uint8Array): boolean => bytes[0] === SHAPED || bytes[0] === PLACED;

/** Scalars are an entry's objects as stored: their shape (the JSON text with each scalar a hole, \u0000) and each scalar's JSON text in order. */
export interface Scalars {
  shape: string;
  leaves: string[];
}

/** ShapedColumn reads a shaped column: an entry's text or scalars, and the entries with a leaf holding some bytes. */
export class ShapedColumn {
  private readonly shapeTexts: string[];
  private readonly shapes: string[][]; // each shape cut at its holes
  private readonly codes: Uint32Array; // one type, whatever the stored width: reads stay monomorphic
  /** the leaves stored as texts, one after another in leaf order (shape, then place, then row) */
  private readonly leaves: Buffer;
  /** where each text leaf ends in `leaves`: text leaf k is [ends[k - 1], ends[k]) */
  private readonly ends: Uint32Array;
  /** each entry's row among its shape's entries */
  private readonly row: Int32Array;
  /** each shape's first place: places are numbered shape after shape */
  private readonly firstPlace: number[];
  /** each place's first text leaf (-1: its leaves are stored apart) */
  private readonly textFirst: Int32Array;
  /** the places stored apart, when any are */
  private readonly placed?: PlacedLeaves;
  /** each text leaf's entry, made at the first search */
  private entryOf?: Uint32Array;
  /** each shape's entries by row, made at the first search of places stored apart */
  private entriesByRow?: Int32Array[];
  private ascii?: string; // the text leaves decoded whole, once a scan reads many entries (ASCII only: offsets are bytes)
  private reads = 0;

  constructor(bytes: Uint8Array, n: number) {
    const [shapes, codes, lengths, leaves, heads, numbers] = packr.unpack(bytes.subarray(1)) as [
      string[],
      Uint8Array,
      Uint8Array,
      Uint8Array,
      unknown,
      unknown,
    ];
    this.shapeTexts = shapes;
    this.shapes = shapes.map((s) => s.split(HOLE));
    const code = (this.codes = new Uint32Array(n));
    code.set(unpackCodes(codes, n)); // set, not from: from walks an iterator
    const rows = new Array<number>(shapes.length).fill(0);
    const row = (this.row = new Int32Array(n));
    for (let i = 0; i < n; i++) row[i] = code[i] === 0 ? -1 : rows[code[i] - 1]++;
    const placeRows: number[] = [];
    this.firstPlace = this.shapes.map((parts, s) => {
      const first = placeRows.length;
      for (let j = 1; j < parts.length; j++) placeRows.push(rows[s]);
      return first;
    });
    if (bytes[0] === PLACED) {
      if (!Array.isArray(heads) || !(numbers instanceof Uint8Array)) throw damagedColumn("it lacks its heads or numbers");
      this.placed = new PlacedLeaves(heads, numbers, placeRows);
    }
    const textFirst = (this.textFirst = new Int32Array(placeRows.length));
    let total = 0;
    for (let p = 0; p < placeRows.length; p++) {
      const apart = this.placed !== undefined && !this.placed.isText(p);
      textFirst[p] = apart ? -1 : total;
      if (!apart) total += placeRows[p];
    }
    this.leaves = Buffer.from(leaves.buffer, leaves.byteOffset, leaves.length);
    const ends = (this.ends = new Uint32Array(total));
    const read = new VarintReader(lengths, `a shaped objects column's ${total} leaf lengths`);
    let at = 0;
    for (let k = 0; k < total; k++) ends[k] = at += read.next();
    if (read.at !== lengths.length || at !== this.leaves.length) throw damagedColumn(`its lengths do not add up to its ${total} leaves`);
  }

  /** text is entry i's objects JSON text, or null. */
  text(i: number): string | null {
    const s = this.codes[i] - 1;
    if (s < 0) return null;
    const parts = this.shapes[s];
    if (this.ascii === undefined && ++this.reads > WHOLE_AFTER) this.decodeWhole();
    let out = parts[0];
    for (let j = 1, p = this.firstPlace[s]; j < parts.length; j++, p++) out += this.leaf(p, this.row[i]) + parts[j];
    return out;
  }

  /** scalars is entry i's shape and leaves, or null when it has no objects. */
  scalars(i: number): Scalars | null {
    const s = this.codes[i] - 1;
    if (s < 0) return null;
    if (this.ascii === undefined && ++this.reads > WHOLE_AFTER) this.decodeWhole();
    const leaves = new Array<string>(this.shapes[s].length - 1);
    for (let j = 0, p = this.firstPlace[s]; j < leaves.length; j++, p++) leaves[j] = this.leaf(p, this.row[i]);
    return { shape: this.shapeTexts[s], leaves };
  }

  // place p's leaf in row r
  private leaf(p: number, r: number): string {
    const first = this.textFirst[p];
    if (first < 0) return (this.placed as PlacedLeaves).leaf(p, r);
    const k = first + r;
    const from = k === 0 ? 0 : this.ends[k - 1];
    return this.ascii !== undefined ? this.ascii.slice(from, this.ends[k]) : this.leaves.toString("utf8", from, this.ends[k]);
  }

  private decodeWhole(): void {
    const whole = this.leaves.toString("utf8");
    if (whole.length === this.leaves.length) this.ascii = whole;
  }

  /** entriesWith lists, ascending, the entries with a leaf whose UTF-8 holds `utf8`. */
  entriesWith(utf8: Uint8Array): number[] {
    // which entry a leaf or row is of is worked out at the first find: most frames searched hold the needle nowhere
    const found = new Set<number>();
    let k = 0;
    for (let at = this.leaves.indexOf(utf8); at >= 0 && k < this.ends.length; ) {
      while (this.ends[k] <= at) k++;
      if (at + utf8.length <= this.ends[k]) {
        found.add((this.entryOf ??= this.entriesOfLeaves())[k]); // within leaf k; the next entry's occurrences start at its next leaf
        at = this.leaves.indexOf(utf8, this.ends[k]);
      } else at = this.leaves.indexOf(utf8, at + 1); // across two leaves: not an occurrence
    }
    const placed = this.placed;
    if (placed) {
      const needle = Buffer.from(utf8.buffer, utf8.byteOffset, utf8.length).toString("utf8");
      const digits = digitsOf(needle);
      for (const [s, parts] of this.shapes.entries())
        for (let j = 1, p = this.firstPlace[s]; j < parts.length; j++, p++)
          if (this.textFirst[p] < 0) for (const r of placed.rowsHolding(p, needle, digits)) found.add((this.entriesByRow ??= this.entriesOfRows())[s][r]);
    }
    return [...found].sort((a, b) => a - b);
  }

  private entriesOfLeaves(): Uint32Array {
    const out = new Uint32Array(this.ends.length);
    const { codes, row, textFirst, firstPlace } = this;
    for (let i = 0; i < row.length; i++) {
      const s = codes[i] - 1;
      if (s < 0) continue;
      for (let j = 1, p = firstPlace[s]; j < this.shapes[s].length; j++, p++) if (textFirst[p] >= 0) out[textFirst[p] + row[i]] = i;
    }
    return out;
  }

  private entriesOfRows(): Int32Array[] {
    const out = this.shapes.map(() => [] as number[]);
    for (let i = 0; i < this.codes.length; i++) if (this.codes[i] !== 0) out[this.codes[i] - 1].push(i);
    return out.map((entries) => Int32Array.from(entries));
  }
}

const WHOLE_AFTER = 64;

const damagedColumn = (why: string) => new Error(`a shaped objects column is damaged (${why}): the data directory is damaged; restore it from a backup`);
