// places: how a shaped column (shaped.ts) stores the leaves of one place (one hole of one shape, entry after entry)
// when not as texts. zstd finds repeated texts but not that 1041 follows 1040, and spends about a byte on each
// repeat of a short text, so:
//   [DICT, values]            a place of few distinct leaves: each leaf is the code of its value (a varint)
//   [NUMBERS, parts, hows]    a place whose every leaf is its runs of digits between the same texts (`"req-17"`,
//                             `"10.0.3.7"`, `404`): parts are those texts, each run a whole number; each run's column
//                             is written as hows[j] says (number-column.ts)
// Codes and numbers are varints in one stream, place after place, a place's runs column after column.
import { type How, isHow, putNumbers, readNumbers } from "./number-column.ts";
import { VarintReader, varint } from "./varint.ts";

const DICT = 1;
const NUMBERS = 2;
/** Head says how a place's leaves are stored: 0 as texts, else as codes of a dictionary or as numbers. */
export type Head = 0 | [typeof DICT, values: string[]] | [typeof NUMBERS, parts: string[], hows: How[]];

/** A place of at most this many distinct leaves is a dictionary: a code a byte, most often a few bits once packed. */
const FEW_DISTINCT = 64;
/** Runs of digits in a leaf at most, for its numbers. */
const MAX_RUNS = 8;
/** Digits of a run at most: its number and the steps between numbers stay whole numbers below 2^53. */
const MAX_DIGITS = 15;
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/** placeHead chooses how a place's leaves are stored, appends their codes or numbers to `out` and gives the head; 0: texts. */
export function placeHead(leaves: readonly string[], out: number[]): Head {
  const distinct = new Map<string, number>();
  for (const leaf of leaves) {
    if (!distinct.has(leaf)) distinct.set(leaf, distinct.size);
    if (distinct.size > FEW_DISTINCT) break;
  }
  if (distinct.size <= FEW_DISTINCT && distinct.size < leaves.length / 2) {
    for (const leaf of leaves) varint(out, distinct.get(leaf) as number);
    return [DICT, [...distinct.keys()]];
  }
  const numbered = numberedPlace(leaves);
  if (!numbered) return 0;
  return [NUMBERS, numbered.parts, numbered.columns.map((column) => putNumbers(out, column))];
}

/** numberedPlace splits every leaf of a place at its runs of digits, or tells that they do not share the texts between. */
function numberedPlace(leaves: readonly string[]): { parts: string[]; columns: number[][] } | undefined {
  const first = leaves.length > 0 ? numberedLeaf(leaves[0]) : undefined;
  if (first === undefined) return undefined;
  const { parts } = first;
  const columns = first.values.map((v) => [v]);
  for (let i = 1; i < leaves.length; i++) if (!numbersAlong(leaves[i], parts, columns)) return undefined;
  return { parts, columns };
}

/** numbersAlong reads a leaf as `parts` with a run of digits between each two (numberedLeaf's), pushing the runs' numbers on `columns`; false when it is not. */
function numbersAlong(leaf: string, parts: readonly string[], columns: number[][]): boolean {
  let at = 0;
  for (let j = 0; ; j++) {
    const part = parts[j]; // compared unit by unit: most parts are a unit or two, and startsWith is a call
    if (at + part.length > leaf.length) return false;
    for (let k = 0; k < part.length; k++) if (leaf.charCodeAt(at + k) !== part.charCodeAt(k)) return false;
    at += part.length;
    if (j === parts.length - 1) return at === leaf.length;
    const negative = j === 0 && parts[0] === "" && leaf.charCodeAt(at) === 0x2d; // a JSON number's minus
    if (negative) at++;
    const start = at;
    let value = 0;
    for (let c = leaf.charCodeAt(at); isDigit(c); c = leaf.charCodeAt(++at)) value = value * 10 + c - 0x30;
    const digits = at - start;
    if (digits === 0 || digits > MAX_DIGITS || (digits > 1 && leaf.charCodeAt(start) === 0x30) || (negative && value === 0)) return false;
    columns[j].push(negative ? -value : value);
  }
}

/**
 * numberedLeaf splits a leaf at its runs of digits: the texts around them and their numbers (the first negative when
 * the text before it is a lone minus, as a JSON number's); undefined when a run is not its number's own text (a
 * leading zero, too long) or there are too many, so that leafText gives back the leaf exactly.
 */
function numberedLeaf(leaf: string): { parts: string[]; values: number[] } | undefined {
  const parts: string[] = [];
  const values: number[] = [];
  let at = 0;
  for (let p = 0; p < leaf.length; ) {
    if (!isDigit(leaf.charCodeAt(p))) {
      p++;
      continue;
    }
    let q = p + 1;
    while (q < leaf.length && isDigit(leaf.charCodeAt(q))) q++;
    if (q - p > MAX_DIGITS || (leaf.charCodeAt(p) === 0x30 && q - p > 1) || values.length === MAX_RUNS) return undefined;
    parts.push(leaf.slice(at, p));
    values.push(Number(leaf.slice(p, q)));
    at = p = q;
  }
  if (values.length === 0) return undefined;
  parts.push(leaf.slice(at));
  if (parts[0] === "-" && values[0] !== 0) {
    parts[0] = "";
    values[0] = -values[0];
  }
  return { parts, values };
}

const damaged = (why: string) => new Error(`a shaped objects column is damaged (${why}): the data directory is damaged; restore it from a backup`);

/** Place is a stored place read: its dictionary and each row's code, or its texts around runs and the runs' numbers. */
type Place = { values: string[]; codes: Uint32Array } | { parts: string[]; numbers: Float64Array; rows: number };

/**
 * PlacedLeaves reads the places stored apart of a shaped column: a leaf of any row, and the rows whose leaf holds a
 * text. Nothing is decoded until a leaf or a search asks, and leaves are made one at a time: a page reads a few
 * entries of a frame, and a search of a place with no text of the needle makes none.
 */
export class PlacedLeaves {
  private readonly places: (Place | undefined)[] = [];
  /** where each place's codes or numbers start in `bytes`, found at the first read */
  private starts?: Int32Array;

  /** heads and bytes as stored; rows: each place's row count (its shape's entries). */
  constructor(
    private readonly heads: readonly unknown[],
    private readonly bytes: Uint8Array,
    private readonly rows: readonly number[],
  ) {
    if (heads.length !== rows.length) throw damaged("its heads do not match its shapes");
  }

  /** isText tells whether place p's leaves are stored as texts (not here). */
  isText(p: number): boolean {
    return this.heads[p] === 0;
  }

  /** leaf is the text of place p's leaf in row r. */
  leaf(p: number, r: number): string {
    const place = this.place(p);
    if ("values" in place) return place.values[place.codes[r]];
    let out = place.parts[0];
    for (let j = 1; j < place.parts.length; j++) out += String(place.numbers[(j - 1) * place.rows + r]) + place.parts[j];
    return out;
  }

  /** rowsHolding lists, ascending, place p's rows whose leaf holds `needle` (its digits read by digitsOf, once for every place searched). */
  rowsHolding(p: number, needle: string, maybe = digitsOf(needle)): number[] {
    const out: number[] = [];
    // most places hold no leaf with the needle, as their head tells: then their codes or numbers stay undecoded
    const head = this.heads[p];
    if (Array.isArray(head) && isTexts(head[1])) {
      if (head[0] === DICT && !head[1].some((v) => v.includes(needle))) return out;
      if (head[0] === NUMBERS && (maybe === null || !fitsAround(needle, head[1]))) return out;
    }
    const place = this.place(p); // a head that is neither is refused here as damaged
    if ("values" in place) {
      const held = place.values.map((v) => v.includes(needle));
      for (let r = 0; r < place.codes.length; r++) if (held[place.codes[r]]) out.push(r);
      return out;
    }
    const rows = maybe ? rowsMaybe(place, maybe) : undefined;
    for (let r = 0; r < place.rows; r++) if ((rows === undefined || rows[r] === 1) && this.leaf(p, r).includes(needle)) out.push(r);
    return out;
  }

  // place p's codes or numbers, decoded when first asked for: a search or a read of one place decodes no other
  private place(p: number): Place {
    let place = this.places[p];
    if (place === undefined) {
      const read = new VarintReader(this.bytes, "a shaped objects column's codes and numbers");
      read.at = (this.starts ??= this.startsOf())[p];
      place = this.places[p] = placeOf(this.heads[p], this.rows[p], read) as Place;
    }
    return place;
  }

  // where each place's varints start, by passing over them: a varint ends at its first byte below 0x80
  private startsOf(): Int32Array {
    const starts = new Int32Array(this.heads.length);
    let at = 0;
    for (const [p, head] of this.heads.entries()) {
      starts[p] = at;
      const count = head === 0 ? 0 : this.rows[p] * (Array.isArray(head) && head[0] === NUMBERS && Array.isArray(head[1]) ? head[1].length - 1 : 1);
      for (let k = 0; k < count; k++) {
        while (at < this.bytes.length && this.bytes[at] >= 0x80) at++;
        if (at++ >= this.bytes.length) throw damaged("its codes and numbers end early");
      }
    }
    if (at !== this.bytes.length) throw damaged("its codes and numbers do not add up to its places");
    return starts;
  }
}

/**
 * Digits is what a needle's digits ask of a leaf's numbers, so that most rows are passed over without their leaf
 * made. In a leaf, every run of digits is one number's whole text, so a run inside the needle (non-digits on both
 * sides) is some number; a run that ends the needle after a non-digit starts some number's digits, one that starts
 * it before a non-digit ends them; a needle of digits alone lies within some number's digits.
 */
type Digits = { run: number; length: number; at: "whole" | "start" | "end" | "within" };

/**
 * digitsOf is what each of the needle's runs of digits asks, every one of them of some number of the leaf (undefined:
 * nothing, as for a needle without digits; null: no leaf can hold it).
 */
export function digitsOf(needle: string): Digits[] | null | undefined {
  const asks: Digits[] = [];
  for (let i = 0; i < needle.length; i++) {
    if (!isDigit(needle.charCodeAt(i))) continue;
    let end = i + 1;
    while (end < needle.length && isDigit(needle.charCodeAt(end))) end++;
    const digits = needle.slice(i, end);
    const at = i > 0 && end < needle.length ? "whole" : i > 0 ? "start" : end < needle.length ? "end" : "within";
    const leadingZero = digits.length > 1 && digits[0] === "0";
    if (digits.length > MAX_DIGITS || (leadingZero && (at === "whole" || at === "start"))) return null;
    asks.push({ run: Number(digits), length: digits.length, at });
    i = end - 1;
  }
  return asks.length > 0 ? asks : undefined;
}

// the rows (1) some number of which answers each ask
function rowsMaybe(place: { numbers: Float64Array; rows: number }, asks: readonly Digits[]): Uint8Array {
  const out = rowsAnswering(place, asks[0]);
  for (let a = 1; a < asks.length; a++) {
    const more = rowsAnswering(place, asks[a]);
    for (let r = 0; r < out.length; r++) out[r] &= more[r];
  }
  return out;
}

// which rows' numbers may give their leaf what one ask asks (1: may), a column at a time
function rowsAnswering(place: { numbers: Float64Array; rows: number }, { run, length, at }: Digits): Uint8Array {
  const { numbers, rows } = place;
  const out = new Uint8Array(rows);
  const span = 10 ** length;
  for (let k = 0; k < numbers.length; k++) {
    const n = Math.abs(numbers[k]);
    const may =
      at === "whole"
        ? n === run
        : at === "end"
          ? n % span === run && digitCount(n) >= length
          : at === "start"
            ? digitCount(n) >= length && Math.floor(n / 10 ** (digitCount(n) - length)) === run
            : holdsDigits(n, run, length);
    if (may) out[k % rows] = 1;
  }
  return out;
}

// whether the decimal digits of n (a whole number) hold `length` digits whose value is `d` (leading zeros kept)
function holdsDigits(n: number, d: number, length: number): boolean {
  const span = 10 ** length;
  for (let rest = n, left = digitCount(n); left >= length; rest = Math.floor(rest / 10), left--) if (rest % span === d) return true;
  return false;
}

function digitCount(n: number): number {
  let count = 1;
  for (let p = 10; p <= n; p *= 10) count++;
  return count;
}

const isTexts = (v: unknown): v is string[] => Array.isArray(v) && v.every((t) => typeof t === "string");

// a numbered leaf is its parts, digits and a minus: a needle with any other character is in none of them
function fitsAround(needle: string, parts: readonly string[]): boolean {
  const around = parts.join("");
  for (let i = 0; i < needle.length; i++) if (!isDigit(needle.charCodeAt(i)) && needle[i] !== "-" && !around.includes(needle[i])) return false;
  return true;
}

// a stored head and its rows' codes or numbers, checked; undefined when the place's leaves are texts
function placeOf(head: unknown, rows: number, read: VarintReader): Place | undefined {
  if (head === 0) return undefined;
  if (Array.isArray(head) && head[0] === DICT && isTexts(head[1])) {
    const codes = new Uint32Array(rows);
    for (let r = 0; r < rows; r++) if ((codes[r] = read.next()) >= head[1].length) throw damaged("a code is past its dictionary");
    return { values: head[1], codes };
  }
  if (
    !(
      Array.isArray(head) &&
      head[0] === NUMBERS &&
      isTexts(head[1]) &&
      head[1].length >= 2 &&
      head[1].length <= MAX_RUNS + 1 &&
      Array.isArray(head[2]) &&
      head[2].length === head[1].length - 1 &&
      head[2].every(isHow)
    )
  )
    throw damaged("a place's head is neither 0, a dictionary nor numbers");
  const runs = head[1].length - 1;
  const numbers = new Float64Array(rows * runs); // column after column, as stored
  for (let j = 0; j < runs; j++) numbers.set(readNumbers(read, rows, head[2][j], damaged), j * rows);
  return { parts: head[1], numbers, rows };
}
