// posting-groups: how one stored posting value lists a term's blocks. A flush stores, per term, one value for a run of
// blocks (at most GROUP_BLOCKS, spanning at most GROUP_SPAN_MS), keyed by the run's newest block: a key per block and
// term cost about 200 bytes of key and page where its positions cost a few, and a log of many distinct actions and tags
// has hundreds of terms a block.
//
// A group value is: a varint count, then per block, newest first, its millisecond below the key's (varint), its first
// id (a UUIDv7 of the block's own millisecond as its last 10 bytes, another UUID as 16, else its UTF-16 units) and its positions: a varint count (0: every entry of the block), then
// either their gaps as varints or a bitmap, whichever is shorter. A group value has an odd length, ending in GROUP;
// a value of even length is a single block's positions as uint16 (the layout before groups), keyed by that block.

import { VarintReader, varint } from "../format/varint.ts";

/** A group spans at most this many milliseconds, so a reverse scan that starts this far above its top finds them all. */
export const GROUP_SPAN_MS = 4096;
/** Blocks in one group at most: a group is decoded whole. */
export const GROUP_BLOCKS = 512;
const GROUP = 0x47;
const UUID_TAG = 1;
const UNITS_TAG = 0;
/** a UUIDv7 whose first 6 bytes are its block's millisecond, as every id Sluice draws is: those 6 are not stored */
const OWN_MS_TAG = 2;
const GAPS = 0;
const BITMAP = 1;
/** a block holds fewer entries than this: positions are uint16 */
const MAX_POSITIONS = 65_536;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** GroupedBlock is a block of a group: its key and its positions (null: every entry of the block). */
export interface GroupedBlock {
  ms: number;
  firstId: string;
  positions: number[] | null;
}

/** encodeGroup stores blocks (newest first, the first one the key's) as one group value. */
export function encodeGroup(blocks: readonly GroupedBlock[]): Uint8Array {
  const out: number[] = [];
  varint(out, blocks.length);
  const top = blocks[0].ms;
  for (const b of blocks) {
    varint(out, top - b.ms);
    if (UUID.test(b.firstId)) {
      const own = b.firstId.startsWith(msHex(b.ms));
      out.push(own ? OWN_MS_TAG : UUID_TAG);
      for (const byte of Buffer.from(b.firstId.replaceAll("-", "").slice(own ? 12 : 0), "hex")) out.push(byte);
    } else {
      out.push(UNITS_TAG);
      varint(out, b.firstId.length);
      for (let i = 0; i < b.firstId.length; i++) out.push(b.firstId.charCodeAt(i) & 0xff, b.firstId.charCodeAt(i) >>> 8);
    }
    putPositions(out, b.positions);
  }
  if (out.length % 2 === 1) out.push(0); // the value's length must be odd
  out.push(GROUP);
  return Uint8Array.from(out);
}

function putPositions(out: number[], positions: number[] | null): void {
  if (positions === null) return void out.push(0);
  varint(out, positions.length);
  const gaps: number[] = [];
  for (let i = 0; i < positions.length; i++) varint(gaps, i === 0 ? positions[0] : positions[i] - positions[i - 1] - 1);
  const bitmapBytes = (positions[positions.length - 1] >> 3) + 1;
  if (gaps.length <= bitmapBytes + 2) {
    out.push(GAPS);
    for (const g of gaps) out.push(g);
    return;
  }
  out.push(BITMAP);
  varint(out, bitmapBytes);
  const bitmap = new Uint8Array(bitmapBytes);
  for (const p of positions) bitmap[p >> 3] |= 1 << (p & 7);
  for (const byte of bitmap) out.push(byte);
}

/** isGroup tells a group value from a single block's positions (the layout before groups). */
export const isGroup = (value: Uint8Array): boolean => value.length % 2 === 1;

/**
 * decodeGroup reads a group value keyed by (ms): its blocks, newest first, each with its positions when `positions`
 * is true; when false, `positions` is null for every entry and an array of the right length (holes) otherwise.
 */
export function decodeGroup(ms: number, value: Uint8Array, positions: boolean): GroupedBlock[] {
  const read = new VarintReader(value, "a stored posting group");
  const n = read.next();
  const out: GroupedBlock[] = [];
  for (let k = 0; k < n; k++) {
    const blockMs = ms - read.next();
    let firstId: string;
    const tag = value[read.at++];
    if (tag === UUID_TAG || tag === OWN_MS_TAG) {
      const bytes = tag === UUID_TAG ? 16 : 10;
      const own = tag === UUID_TAG ? "" : msHex(blockMs).replace("-", "");
      if (read.at + bytes > value.length || (tag === OWN_MS_TAG && own === "")) throw damaged();
      const hex = own + Buffer.from(value.buffer, value.byteOffset + read.at, bytes).toString("hex");
      firstId = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
      read.at += bytes;
    } else {
      const units = read.next();
      if (read.at + 2 * units > value.length) throw damaged();
      let s = "";
      for (let i = 0; i < units; i++, read.at += 2) s += String.fromCharCode(value[read.at] | (value[read.at + 1] << 8));
      firstId = s;
    }
    const count = read.next();
    if (count > MAX_POSITIONS) throw damaged();
    let list: number[] | null = null;
    if (count > 0) {
      const mode = value[read.at++];
      list = positions ? [] : new Array<number>(count);
      if (mode === GAPS) {
        let p = -1;
        for (let i = 0; i < count; i++) {
          p += read.next() + 1;
          if (positions) list.push(p);
        }
      } else {
        const bytes = read.next();
        if (read.at + bytes > value.length) throw damaged();
        if (positions) for (let i = 0; i < bytes * 8; i++) if (value[read.at + (i >> 3)] & (1 << (i & 7))) list.push(i);
        read.at += bytes;
      }
    }
    out.push({ ms: blockMs, firstId, positions: list });
  }
  return out;
}

/** msHex is a millisecond as a UUIDv7 starts with it: 12 hex digits, a dash after the eighth. */
function msHex(ms: number): string {
  const hex = ms >= 0 && ms < 2 ** 48 && Number.isInteger(ms) ? ms.toString(16).padStart(12, "0") : "";
  return hex === "" ? "-" : `${hex.slice(0, 8)}-${hex.slice(8)}`; // "-": no UUID starts with it
}

const damaged = () => new Error("a stored posting group is damaged (it ends early or overflows): restore the data directory from a backup");

/** groupsOf splits a term's blocks (newest first) into groups: each within GROUP_SPAN_MS and GROUP_BLOCKS. */
export function groupsOf<T extends { ms: number }>(blocks: readonly T[]): T[][] {
  const groups: T[][] = [];
  for (const b of blocks) {
    const last = groups[groups.length - 1];
    if (last && last.length < GROUP_BLOCKS && last[0].ms - b.ms <= GROUP_SPAN_MS) last.push(b);
    else groups.push([b]);
  }
  return groups;
}
