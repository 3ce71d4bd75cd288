// posting-groups: how one stored posting value lists a term's blocks. A flush stores, per term, one value for a run of
// blocks (at most GROUP_BLOCKS, spanning at most GROUP_SPAN_MS), keyed by the run's newest block: a key per block and
// term cost about 200 bytes of key and page where its positions cost a few, and a log of many distinct actions and tags
// has hundreds of terms a block.
//
// A group value is: a varint count, then per block, newest first, its millisecond below the key's (varint), its first
// id (a UUIDv7 of the block's own millisecond as its last 10 bytes, another UUID as 16, else its UTF-16 units) and its positions: a varint count (0: every entry of the block), then
// either their gaps as varints or a bitmap, whichever is shorter. A group value has an odd length, ending in
// GROUP_EXTENT after how far below the key its oldest block lies (uint32, little-endian), so that a read passes over a
// group or counts it without walking its blocks; values ending in GROUP (written before) lack it and are walked.
// Decoders read the count's blocks and ignore what follows them. A value of even length is a single block's positions
// as uint16 (the layout before groups), keyed by that block.

import { VarintReader, varint } from "../format/varint.ts";

/**
 * A group spans at most this many milliseconds, so a reverse scan that starts this far above its top finds them all.
 * Ten minutes: a service writing a bulk every few seconds still gets groups of many blocks, not a key per block and
 * term, and a read of a past window passes over the few groups keyed above it by their extent alone. Reads of data
 * stored under a shorter span only look further.
 */
export const GROUP_SPAN_MS = 600_000;
/** Blocks in one group at most: a group is decoded whole. */
export const GROUP_BLOCKS = 512;
const GROUP = 0x47;
const GROUP_EXTENT = 0x45;
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
    if (b instanceof StoredBlock) {
      // a block read from a group being joined: its bytes as they are, not its id and positions made and encoded again
      pushBytes(out, b.encoded);
      continue;
    }
    if (UUID.test(b.firstId)) {
      const own = b.firstId.startsWith(msHex(b.ms));
      out.push(own ? OWN_MS_TAG : UUID_TAG);
      pushBytes(out, Buffer.from(b.firstId.replaceAll("-", "").slice(own ? 12 : 0), "hex"));
    } else {
      out.push(UNITS_TAG);
      varint(out, b.firstId.length);
      for (let i = 0; i < b.firstId.length; i++) out.push(b.firstId.charCodeAt(i) & 0xff, b.firstId.charCodeAt(i) >>> 8);
    }
    putPositions(out, b.positions);
  }
  if (out.length % 2 === 1) out.push(0); // the value's length must be odd
  const oldestBelow = top - blocks[blocks.length - 1].ms;
  if (oldestBelow > 0xffffffff) out.push(GROUP);
  else out.push(oldestBelow & 0xff, (oldestBelow >>> 8) & 0xff, (oldestBelow >>> 16) & 0xff, oldestBelow >>> 24, GROUP_EXTENT);
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
  pushBytes(out, bitmap);
}

/** pushBytes appends bytes by index: for-of over a typed array runs JavaScriptCore's generic iterator, a call a byte */
function pushBytes(out: number[], bytes: Uint8Array): void {
  for (let i = 0; i < bytes.length; i++) out.push(bytes[i]);
}

/**
 * groupExtent tells how many blocks a group value lists and how far below its key's millisecond the oldest of them
 * lies: read from its end, or for a value written before that was kept, by walking its bytes without decoding a block.
 */
export function groupExtent(value: Uint8Array): { blocks: number; oldestBelow: number } {
  const read = new VarintReader(value, "a stored posting group");
  const blocks = read.next();
  const end = value.length - 1;
  if (value[end] === GROUP_EXTENT && end >= 5) {
    if (blocks > value.length) throw damaged(); // each block takes bytes of its own
    return { blocks, oldestBelow: (value[end - 4] | (value[end - 3] << 8) | (value[end - 2] << 16) | (value[end - 1] << 24)) >>> 0 };
  }
  let oldestBelow = 0;
  for (let k = 0; k < blocks; k++) {
    oldestBelow = read.next();
    const tag = value[read.at++];
    // a length is read before `read.at +=` reads read.at: `read.at += read.next()` would lose the varint's bytes
    const idBytes = tag === UUID_TAG ? 16 : tag === OWN_MS_TAG ? 10 : 2 * read.next();
    read.at += idBytes;
    const count = read.next();
    if (count > 0 && value[read.at++] === GAPS) {
      // past `count` varints: each ends at a byte below 0x80
      let at = read.at;
      let left = count;
      for (; left > 0 && at < value.length; at++) if (value[at] < 0x80) left--;
      if (left > 0) throw damaged();
      read.at = at;
    } else if (count > 0) {
      const bitmapBytes = read.next();
      read.at += bitmapBytes;
    }
    if (read.at > value.length) throw damaged();
  }
  return { blocks, oldestBelow };
}

/** isGroup tells a group value from a single block's positions (the layout before groups). */
export const isGroup = (value: Uint8Array): boolean => value.length % 2 === 1;

/**
 * decodeGroup reads a group value keyed by (ms): its blocks, newest first, each with its positions when `positions`
 * is true; when false, `positions` is null for every entry and an array of the right length (holes) otherwise.
 * Every block is checked whole here; its id and positions are made when first asked for (a page reads a few blocks
 * of a group, and a planner's count none).
 */
export function decodeGroup(ms: number, value: Uint8Array, positions: boolean): GroupedBlock[] {
  const read = new VarintReader(value, "a stored posting group");
  const n = read.next();
  const out: GroupedBlock[] = [];
  for (let k = 0; k < n; k++) {
    const blockMs = ms - read.next();
    const start = read.at;
    const tag = value[read.at++];
    let id: number | string = read.at;
    if (tag === UUID_TAG || tag === OWN_MS_TAG) {
      read.at += tag === UUID_TAG ? 16 : 10;
      if (read.at > value.length || (tag === OWN_MS_TAG && !uuidMs(blockMs))) throw damaged();
    } else {
      const units = read.next();
      if (read.at + 2 * units > value.length) throw damaged();
      let s = "";
      for (let i = 0; i < units; i++, read.at += 2) s += String.fromCharCode(value[read.at] | (value[read.at + 1] << 8));
      id = s;
    }
    const count = read.next();
    if (count > MAX_POSITIONS) throw damaged();
    const positionsAt = count === 0 ? -1 : read.at;
    if (count > 0) {
      const mode = value[read.at++];
      if (mode === GAPS) for (let i = 0; i < count; i++) read.next();
      else {
        const bytes = read.next();
        if (read.at + bytes > value.length) throw damaged();
        read.at += bytes;
      }
    }
    out.push(new StoredBlock(blockMs, value, tag, id, positionsAt, count, positions, start, read.at));
  }
  return out;
}

/** StoredBlock is a block of a decoded group, its id and positions read from the group's bytes when first asked for. */
class StoredBlock implements GroupedBlock {
  private id: string | undefined;
  private list: number[] | null | undefined;

  constructor(
    readonly ms: number,
    private readonly value: Uint8Array,
    private readonly tag: number,
    /** where the id's bytes start, or the id itself (UNITS_TAG) */
    private readonly idAt: number | string,
    /** where the positions start; -1 when they are every entry */
    private readonly positionsAt: number,
    private readonly count: number,
    private readonly withPositions: boolean,
    /** where its id's tag starts and its positions end: what encodeGroup copies instead of encoding them again */
    private readonly start: number,
    private readonly end: number,
  ) {}

  /** encoded is the block's id and positions as its group value holds them. */
  get encoded(): Uint8Array {
    return this.value.subarray(this.start, this.end);
  }

  get firstId(): string {
    if (this.id !== undefined) return this.id;
    if (typeof this.idAt === "string") return (this.id = this.idAt);
    const own = this.tag === UUID_TAG ? "" : msHex(this.ms).replace("-", "");
    const hex = own + Buffer.from(this.value.buffer, this.value.byteOffset + this.idAt, this.tag === UUID_TAG ? 16 : 10).toString("hex");
    return (this.id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`);
  }

  get positions(): number[] | null {
    if (this.list !== undefined) return this.list;
    if (this.positionsAt < 0) return (this.list = null);
    if (!this.withPositions) return (this.list = new Array<number>(this.count));
    const value = this.value;
    const read = new VarintReader(value, "a stored posting group");
    read.at = this.positionsAt + 1;
    const list: number[] = [];
    if (value[this.positionsAt] === GAPS) {
      let p = -1;
      for (let i = 0; i < this.count; i++) list.push((p += read.next() + 1));
    } else {
      const bytes = read.next();
      for (let i = 0; i < bytes * 8; i++) if (value[read.at + (i >> 3)] & (1 << (i & 7))) list.push(i);
    }
    return (this.list = list);
  }
}

/** uuidMs tells whether a millisecond can start a UUIDv7 (48 bits). */
const uuidMs = (ms: number): boolean => ms >= 0 && ms < 2 ** 48 && Number.isInteger(ms);

/** msHex is a millisecond as a UUIDv7 starts with it: 12 hex digits, a dash after the eighth. */
function msHex(ms: number): string {
  const hex = uuidMs(ms) ? ms.toString(16).padStart(12, "0") : "";
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
