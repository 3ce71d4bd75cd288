// part: many small blocks merged into one stored value (merge.ts), and the pointer that stands for each of them.
//
// Key layout (db `parts`, keys as in `entries`):
//   [workspaceId, environment, serverMs, firstId] → the part: a block value (block.ts) of its blocks' entries, block
//                                                   after block, keyed by its first block's key
//   [workspaceId, environment, FRONTIER_MS]       → [serverMs, firstId]: the block key the merge goes on from
// A merged block keeps its key in `entries`, so every index still names it; its value there becomes a pointer to its
// entries in the part: where they start and how many. Parts hold runs of consecutive blocks and never overlap, so a
// block's part is the part with the greatest key at or below the block's (partOf). The part goes with the pointer of
// its last block (retention deletes oldest first).
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { Block, type Entry } from "./block.ts";
import { assembleBlock, encodeWithObjects } from "./block-encode.ts";
import { clientBoundsOf, type ClientBounds } from "../indexes/bounds.ts";
import { VarintReader, varint } from "./varint.ts";

/** Pointer says where a merged block's entries are in its part: entries [start, start + size). */
export interface Pointer {
  start: number;
  size: number;
  /** the part's last block: the part goes with this pointer */
  last: boolean;
}

/** POINTER_TAG starts every pointer value: msgpack never writes 0xc1, so no block value starts with it. */
const POINTER_TAG = 0xc1;
const LAST = 1;

/** FRONTIER_MS is the millisecond of a tenant's merge frontier key in `parts`: below any block's. */
export const FRONTIER_MS = -1;

/** encodePointer stores a pointer: tag, flags, then start and size as varints. */
export function encodePointer(p: Pointer): Uint8Array {
  const out: number[] = [POINTER_TAG, p.last ? LAST : 0];
  varint(out, p.start);
  varint(out, p.size);
  return new Uint8Array(out);
}

/** pointerOf reads a pointer value; undefined when the value is a block. It copies out all it needs: lmdb-js may reuse the buffer. */
export function pointerOf(value: Uint8Array): Pointer | undefined {
  if (value[0] !== POINTER_TAG) return undefined;
  const read = new VarintReader(value.subarray(2), "a block's pointer into its part");
  const start = read.next();
  const size = read.next();
  return { start, size, last: (value[1] & LAST) !== 0 };
}

/** PartKey names a part: its first block's server millisecond and first id. */
export interface PartKey {
  ms: number;
  firstId: string;
}

/** partOf finds the key of the part that holds a merged block: the greatest part key at or below the block's; undefined when none is (retention took it). */
export function partOf(parts: Database, ws: string, env: Environment, ms: number, firstId: string): PartKey | undefined {
  for (const key of parts.getKeys({ start: [ws, env, ms, firstId], end: [ws, env, 0], reverse: true, limit: 1, snapshot: false })) {
    const k = key as unknown[];
    return { ms: k[2] as number, firstId: k[3] as string };
  }
  return undefined;
}

/** Member is a block to merge: its millisecond and its stored value (never a pointer). */
export interface Member {
  ms: number;
  value: Uint8Array;
}

/** encodePart merges blocks, in key order, into one part value, block k's entries after block k-1's, with the part's client bounds (any thread may call it). */
export function encodePart(members: readonly Member[]): { value: Uint8Array; bounds: ClientBounds } {
  const ids: string[] = [];
  const entries: Entry[] = [];
  const objects: (string | null)[] = [];
  for (const { ms, value } of members) {
    const block = Block.decode(ms, value);
    for (let i = 0; i < block.size; i++) {
      const entry = block.entry(i);
      ids.push(entry.id);
      entries.push(entry);
      // the stored JSON text as it is: parsed and written again, it could only drift
      const text = block.objectsText(i);
      objects.push(
        text !== undefined
          ? text
          : entry.actor === null && entry.target === null && entry.context === null && entry.metadata === null
            ? null
            : JSON.stringify([entry.actor, entry.target, entry.context, entry.metadata]),
      );
    }
  }
  return { value: assembleBlock(ids, encodeWithObjects(entries, objects).columns), bounds: clientBoundsOf(entries.length, (i) => entries[i].clientMs) };
}

/** storedBlock decodes a value of `entries`: a block, or a merged block read out of its part; undefined once retention took the part. */
export function storedBlock(parts: Database, ws: string, env: Environment, ms: number, firstId: string, value: Uint8Array): Block | undefined {
  const pointer = pointerOf(value);
  if (!pointer) return Block.decode(ms, value);
  const key = partOf(parts, ws, env, ms, firstId);
  const part = key && (parts.get([ws, env, key.ms, key.firstId]) as Uint8Array | undefined);
  return part && Block.decode(key.ms, part).slice(ms, pointer.start, pointer.size);
}

/** storedBytes is what a value of `entries` costs on disk: the value, and its part's once (with the part's last block). */
export function storedBytes(parts: Database, ws: string, env: Environment, ms: number, firstId: string, value: Uint8Array): number {
  const pointer = pointerOf(value);
  if (!pointer?.last) return value.length;
  const key = partOf(parts, ws, env, ms, firstId);
  return value.length + ((key && (parts.get([ws, env, key.ms, key.firstId]) as Uint8Array | undefined))?.length ?? 0);
}
