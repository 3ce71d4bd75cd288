// id-column: a block's ids in format 6. Every id Sluice draws is a UUIDv7 (ids.ts): the 12 hex digits of its
// millisecond, 48 bits that hold its version, counter and variant, then 32 random bits drawn once a millisecond.
// A block stores the first id's millisecond and 48 bits, then each next id's change of both as zigzag varints, and
// each id's 4 random bytes; changes and random bytes alike are kept as runs of equal values when that is shorter. The
// ids of one write change by (0, +1) and share their random bytes, so a block of them takes a few bytes in all; a
// merged part's ids (merge.ts) span many milliseconds, and two writers' ids of one millisecond may interleave.
// Nothing to decompress. Ids of any other shape are kept as their joined ASCII text (packed.ts). Columns written
// before runs (COUNTED, SPANNED: 4 random bytes an id) are still read.
import type { Reader } from "./columns.ts";
import { packWhole, unpackWhole } from "./packed.ts";
import { VarintReader, varint } from "./varint.ts";

/**
 * RUNS is the tag of ids as packIds stores them. COUNTED (ids of one millisecond as counts) and SPANNED (many
 * milliseconds, every change and random bytes listed) were written before; packed.ts's tags (0–2) mark the joined text.
 */
const COUNTED = 3;
const SPANNED = 4;
const RUNS = 6;
/** RUNS flags: the changes, and the random bytes, stored as runs of equal values */
const CHANGE_RUNS = 1;
const RANDOM_RUNS = 2;
const MS_BYTES = 6;
const RANDOM_BYTES = 4;

// an id's 48 bits after the millisecond (hex digits 13–28 without dashes, 12 of them), read without a string made
const highOf = (id: string): number => hexAt(id, 14, 4) * 2 ** 32 + hexAt(id, 19, 4) * 2 ** 16 + hexAt(id, 24, 4);

/** hexAt reads `digits` lowercase hex digits of `s` from `at` (a UUID's, checked by isUuid before). */
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
const msOf = (id: string): number => hexAt(id, 0, 8) * 2 ** 16 + hexAt(id, 9, 4);
const DASH = 0x2d;

/** isUuid tells whether s is a UUID in lowercase hex (8-4-4-4-12), checked a character at a time: no string is made. */
function isUuid(s: string): boolean {
  if (s.length !== 36) return false;
  for (let k = 0; k < 36; k++) {
    const c = s.charCodeAt(k);
    if (k === 8 || k === 13 || k === 18 || k === 23) {
      if (c !== DASH) return false;
    } else if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
}
const zigzag = (d: number): number => (d >= 0 ? 2 * d : -2 * d - 1);
const unzigzag = (z: number): number => (z % 2 === 0 ? z / 2 : -(z + 1) / 2);

/** packIds stores a block's ids (a block's ascending, a merged part's in any order). */
export function packIds(ids: readonly string[]): Uint8Array {
  const n = ids.length;
  for (const id of ids) if (!isUuid(id)) return packWhole(Buffer.from(ids.join(""), "latin1"));
  // each id's change from the one before: of its millisecond and of its 48 bits, zigzagged (index 0 unused)
  const dms = new Array<number>(n);
  const dhigh = new Array<number>(n);
  for (let i = 1, ms = msOf(ids[0]), high = highOf(ids[0]); i < n; i++) {
    const m = msOf(ids[i]);
    const h = highOf(ids[i]);
    dms[i] = zigzag(m - ms);
    dhigh[i] = zigzag(h - high);
    ms = m;
    high = h;
  }
  const changes: number[] = [];
  const changeRuns: number[] = [];
  let runCount = 0;
  for (let i = 1, run = 0; i < n; i++) {
    varint(changes, dms[i]);
    varint(changes, dhigh[i]);
    run++;
    if (i === n - 1 || dms[i + 1] !== dms[i] || dhigh[i + 1] !== dhigh[i]) {
      varint(changeRuns, dms[i]);
      varint(changeRuns, dhigh[i]);
      varint(changeRuns, run);
      run = 0;
      runCount++;
    }
  }
  const random = new Uint8Array(RANDOM_BYTES * n);
  for (let i = 0; i < n; i++) putRandom(random, RANDOM_BYTES * i, ids[i]);
  const sameRandom = (i: number) => {
    for (let k = 0; k < RANDOM_BYTES; k++) if (random[RANDOM_BYTES * i + k] !== random[RANDOM_BYTES * (i + 1) + k]) return false;
    return true;
  };
  const randomRuns: number[] = [];
  for (let i = 0, run = 0; i < n; i++) {
    run++;
    if (i === n - 1 || !sameRandom(i)) {
      varint(randomRuns, run);
      for (let k = 0; k < RANDOM_BYTES; k++) randomRuns.push(random[RANDOM_BYTES * i + k]);
      run = 0;
    }
  }
  const counted: number[] = [];
  varint(counted, runCount);
  const runs = counted.length + changeRuns.length < changes.length;
  const randomAsRuns = randomRuns.length < random.length;
  const out: number[] = [RUNS, (runs ? CHANGE_RUNS : 0) | (randomAsRuns ? RANDOM_RUNS : 0)];
  for (const byte of Buffer.from(ids[0].slice(0, 8) + ids[0].slice(9, 13) + ids[0].slice(14, 18) + ids[0].slice(19, 23) + ids[0].slice(24, 28), "hex"))
    out.push(byte);
  if (runs) for (const byte of counted) out.push(byte);
  for (const byte of runs ? changeRuns : changes) out.push(byte);
  for (const byte of randomAsRuns ? randomRuns : random) out.push(byte);
  return Uint8Array.from(out);
}

/**
 * runsReader reads a column of packIds: every id's millisecond, 48 bits and random bytes are laid out when an id is
 * first asked for (a page reads a few ids of a block, and then it reads them all the same).
 */
function runsReader(bytes: Uint8Array, n: number): Reader<string> {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let laid: { ms: number[]; highs: number[]; random: Int32Array } | undefined;
  const ids = new Array<string | undefined>(n);
  return (i) => {
    let id = ids[i];
    if (id === undefined) {
      laid ??= layRuns(raw, n);
      const ms = laid.ms[i].toString(16).padStart(12, "0");
      const high = laid.highs[i].toString(16).padStart(12, "0");
      const tail = raw.toString("hex", laid.random[i], laid.random[i] + RANDOM_BYTES);
      ids[i] = id = `${ms.slice(0, 8)}-${ms.slice(8)}-${high.slice(0, 4)}-${high.slice(4, 8)}-${high.slice(8)}${tail}`;
    }
    return id;
  };
}

/** layRuns reads a RUNS column whole: each id's millisecond and 48 bits, and where its random bytes lie in `raw`. */
function layRuns(raw: Buffer, n: number): { ms: number[]; highs: number[]; random: Int32Array } {
  const head = 2 + MS_BYTES + 6;
  if (raw.length < head) throw damagedIds();
  const flags = raw[1];
  const ms = new Array<number>(n);
  const highs = new Array<number>(n);
  ms[0] = raw.readUIntBE(2, MS_BYTES);
  highs[0] = raw.readUIntBE(2 + MS_BYTES, 6);
  const read = new VarintReader(raw, "a block's id column");
  read.at = head;
  if (flags & CHANGE_RUNS) {
    const runs = read.next();
    for (let r = 0, i = 1; r < runs; r++) {
      const dms = unzigzag(read.next());
      const dhigh = unzigzag(read.next());
      const count = read.next();
      if (i + count > n) throw damagedIds();
      for (const end = i + count; i < end; i++) {
        ms[i] = ms[i - 1] + dms;
        highs[i] = highs[i - 1] + dhigh;
      }
      if (r === runs - 1 && i !== n) throw damagedIds();
    }
    if (runs === 0 && n > 1) throw damagedIds();
  } else {
    for (let i = 1; i < n; i++) {
      ms[i] = ms[i - 1] + unzigzag(read.next());
      highs[i] = highs[i - 1] + unzigzag(read.next());
    }
  }
  const random = new Int32Array(n);
  if (flags & RANDOM_RUNS) {
    for (let i = 0; i < n; ) {
      const count = read.next();
      const at = read.at;
      read.at += RANDOM_BYTES;
      if (count === 0 || i + count > n || read.at > raw.length) throw damagedIds();
      random.fill(at, i, (i += count));
    }
  } else {
    for (let i = 0; i < n; i++) random[i] = read.at + RANDOM_BYTES * i;
    if (read.at + RANDOM_BYTES * n > raw.length) throw damagedIds();
  }
  for (let i = 0; i < n; i++) if (!(ms[i] >= 0 && ms[i] < 2 ** 48 && highs[i] >= 0 && highs[i] < 2 ** 48)) throw damagedIds();
  return { ms, highs, random };
}

const damagedIds = () => new Error("a block's id column is damaged: the data directory is damaged; restore it from a backup");

/** spannedReader reads a SPANNED column (the first id's millisecond and 48 bits, each next id's changes, 4 random bytes an id); each id's millisecond and 48 bits are summed from the changes when an id is first asked for. */
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
  if (bytes[0] === RUNS) return runsReader(bytes, n);
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
