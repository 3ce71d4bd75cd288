// id-column: a block's ids in format 6. Every id of a block is a UUIDv7 of the block's millisecond, and the ids of a
// write count up (ids.ts): after the shared 12 hex digits of the millisecond, an id is 48 bits that hold its version,
// counter and variant, then 32 random bits. So a block stores the millisecond once, the 48 bits of the first id and
// each next one's increase as a varint (most often 1: one byte), and 4 random bytes an id; nothing to decompress.
// A merged part's ids (merge.ts) span many milliseconds and two writers' ids of one millisecond may interleave: they
// are stored spanned, the first id's millisecond and 48 bits, then each next id's change of both (zigzag varints) and
// its 4 random bytes. Ids of any other shape are kept as their joined ASCII text (packed.ts).
import type { Reader } from "./columns.ts";
import { packWhole, unpackWhole } from "./packed.ts";
import { VarintReader, varint } from "./varint.ts";

/** COUNTED is the tag of ids stored as counts, SPANNED of ids over many milliseconds; packed.ts's tags (0–2) mark the joined text. */
const COUNTED = 3;
const SPANNED = 4;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const MS_BYTES = 6;
const RANDOM_BYTES = 4;

// an id's 48 bits after the millisecond (hex digits 13–28 without dashes, 12 of them), read without a string made
const highOf = (id: string): number => hexAt(id, 14, 4) * 2 ** 32 + hexAt(id, 19, 4) * 2 ** 16 + hexAt(id, 24, 4);

/** hexAt reads `digits` lowercase hex digits of `s` from `at` (a UUID's, checked by UUID before). */
function hexAt(s: string, at: number, digits: number): number {
  let v = 0;
  for (let k = at; k < at + digits; k++) {
    const c = s.charCodeAt(k);
    v = v * 16 + (c <= 57 ? c - 48 : c - 87);
  }
  return v;
}

/** putRandom writes an id's 32 random bits (its last 8 hex digits) at `at`. */
function putRandom(out: Uint8Array, at: number, id: string): void {
  for (let k = 0; k < RANDOM_BYTES; k++) out[at + k] = hexAt(id, 28 + 2 * k, 2);
}
const msOf = (id: string): number => parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
const zigzag = (d: number): number => (d >= 0 ? 2 * d : -2 * d - 1);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/** packIds stores a block's ids (ascending). */
export function packIds(ids: readonly string[]): Uint8Array {
  const n = ids.length;
  const ms = n > 0 ? ids[0].slice(0, 13) : "";
  const highs = ids.map((id) => (UUID.test(id) && id.startsWith(ms) ? highOf(id) : Number.NaN));
  let counted = n > 0;
  for (let i = 0; counted && i < n; i++) counted = !Number.isNaN(highs[i]) && (i === 0 || highs[i] >= highs[i - 1]);
  if (!counted) return n > 0 && ids.every((id) => UUID.test(id)) ? packSpanned(ids) : packWhole(Buffer.from(ids.join(""), "latin1"));
  const steps: number[] = [];
  for (let i = 1; i < n; i++) varint(steps, highs[i] - highs[i - 1]);
  const out = new Uint8Array(1 + MS_BYTES + 6 + RANDOM_BYTES * n + steps.length);
  out[0] = COUNTED;
  out.set(Buffer.from(ms.slice(0, 8) + ms.slice(9, 13), "hex"), 1);
  out.set(Buffer.from(ids[0].slice(14, 18) + ids[0].slice(19, 23) + ids[0].slice(24, 28), "hex"), 1 + MS_BYTES);
  const random = 1 + MS_BYTES + 6;
  for (let i = 0; i < n; i++) putRandom(out, random + RANDOM_BYTES * i, ids[i]);
  out.set(steps, random + RANDOM_BYTES * n);
  return out;
}

/** packSpanned stores UUIDs of any milliseconds in any order: the first's millisecond and 48 bits, each next one's changes, every id's random bytes. */
function packSpanned(ids: readonly string[]): Uint8Array {
  const n = ids.length;
  const steps: number[] = [];
  for (let i = 1; i < n; i++) {
    varint(steps, zigzag(msOf(ids[i]) - msOf(ids[i - 1])));
    varint(steps, zigzag(highOf(ids[i]) - highOf(ids[i - 1])));
  }
  const out = new Uint8Array(1 + MS_BYTES + 6 + RANDOM_BYTES * n + steps.length);
  out[0] = SPANNED;
  out.set(Buffer.from(ids[0].slice(0, 8) + ids[0].slice(9, 13), "hex"), 1);
  out.set(Buffer.from(ids[0].slice(14, 18) + ids[0].slice(19, 23) + ids[0].slice(24, 28), "hex"), 1 + MS_BYTES);
  const random = 1 + MS_BYTES + 6;
  for (let i = 0; i < n; i++) putRandom(out, random + RANDOM_BYTES * i, ids[i]);
  out.set(steps, random + RANDOM_BYTES * n);
  return out;
}

/** spannedReader reads a column of packSpanned; each id's millisecond and 48 bits are summed from the changes when an id is first asked for. */
function spannedReader(bytes: Uint8Array, n: number): Reader<string> {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const random = 1 + MS_BYTES + 6;
  let times: { ms: number[]; highs: number[] } | undefined;
  const ids = new Array<string | undefined>(n);
  return (i) => {
    let id = ids[i];
    if (id === undefined) {
      times ??= sumChanges(raw, raw.readUIntBE(1, MS_BYTES), raw.readUIntBE(1 + MS_BYTES, 6), random + RANDOM_BYTES * n, n);
      const ms = times.ms[i].toString(16).padStart(12, "0");
      const high = times.highs[i].toString(16).padStart(12, "0");
      const tail = raw.toString("hex", random + RANDOM_BYTES * i, random + RANDOM_BYTES * (i + 1));
      ids[i] = id = `${ms.slice(0, 8)}-${ms.slice(8)}-${high.slice(0, 4)}-${high.slice(4, 8)}-${high.slice(8)}${tail}`;
    }
    return id;
  };
}

function sumChanges(raw: Buffer, firstMs: number, firstHigh: number, at: number, n: number): { ms: number[]; highs: number[] } {
  const ms = new Array<number>(n);
  const highs = new Array<number>(n);
  ms[0] = firstMs;
  highs[0] = firstHigh;
  const read = new VarintReader(raw.subarray(at), "a block's id column");
  for (let i = 1; i < n; i++) {
    ms[i] = ms[i - 1] + unzigzag(read.next());
    highs[i] = highs[i - 1] + unzigzag(read.next());
  }
  return { ms, highs };
}

/** idsReader reads a column of packIds; `text` reads the joined text form. */
export function idsReader(bytes: Uint8Array, n: number, text: (joined: Uint8Array, n: number) => Reader<string>): Reader<string> {
  if (bytes[0] === SPANNED) return spannedReader(bytes, n);
  if (bytes[0] !== COUNTED) return text(unpackWhole(bytes, n), n);
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const msHex = raw.toString("hex", 1, 1 + MS_BYTES);
  const head = `${msHex.slice(0, 8)}-${msHex.slice(8)}-`;
  const random = 1 + MS_BYTES + 6;
  let highs: number[] | undefined; // each id's 48 bits, summed from the steps once an id is first asked for
  const ids = new Array<string | undefined>(n);
  return (i) => {
    let id = ids[i];
    if (id === undefined) {
      highs ??= sumSteps(raw, raw.readUIntBE(1 + MS_BYTES, 6), random + RANDOM_BYTES * n, n);
      const high = highs[i].toString(16).padStart(12, "0");
      const tail = raw.toString("hex", random + RANDOM_BYTES * i, random + RANDOM_BYTES * (i + 1));
      ids[i] = id = `${head}${high.slice(0, 4)}-${high.slice(4, 8)}-${high.slice(8)}${tail}`;
    }
    return id;
  };
}

function sumSteps(raw: Buffer, first: number, at: number, n: number): number[] {
  const highs = new Array<number>(n);
  highs[0] = first;
  const read = new VarintReader(raw.subarray(at), "a block's id column");
  for (let i = 1; i < n; i++) highs[i] = highs[i - 1] + read.next();
  return highs;
}
