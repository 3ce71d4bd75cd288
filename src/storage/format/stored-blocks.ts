// stored-blocks: reads blocks of the entries db by key, plain or merged into a part (part.ts), and keeps the last ones
// decoded: a query reads a block to test it, then again to read it, and a part serves each of its blocks.
import type { Database } from "lmdb";
import type { Environment } from "../../schema.ts";
import { Block } from "./block.ts";
import type { Tenant } from "../keys.ts";
import { partOf, pointerOf, type Pointer } from "./part.ts";

/** DECODED_KEPT is how many decoded blocks of format 6 are kept, with the columns they decompressed. */
export const DECODED_KEPT = 128;
/** PARTS_KEPT is how many decoded parts are kept: a part holds thousands of entries, a read of one merged block reads it whole. */
const PARTS_KEPT = 16;
/** Block sizes kept in memory at most (about 100 bytes each). */
const SIZES_KEPT = 500_000;

/** blockName names a block in the caches (and a part, by its first block's key, in partName). */
export const blockName = (ws: string, env: Environment, ms: number, firstId: string) => `${ws}\u0000${env}\u0000${ms}\u0000${firstId}`;
export const partName = (ws: string, env: Environment, ms: number, firstId: string) => `${blockName(ws, env, ms, firstId)}\u0000part`;

export class StoredBlocks {
  /** block sizes by key, as size read them (a deleted block's stays, harmless: it is never asked for again) */
  private readonly sizes = new Map<string, number>();
  /** packed blocks as last decoded, least recently used first (Map order) */
  private readonly decoded = new Map<string, Block>();
  /** parts as last decoded, least recently used first */
  private readonly decodedParts = new Map<string, Block>();

  constructor(
    private readonly db: Database,
    private readonly parts: Database,
  ) {}

  /** forget drops the decoded blocks and parts of these names (retention deleted them). */
  forget(names: readonly string[]): void {
    for (const name of names) {
      this.decoded.delete(name);
      this.decodedParts.delete(name);
    }
  }

  /** read reads one block by its key; undefined once it is deleted (retention). */
  read(tenant: Tenant, ms: number, firstId: string): Block | undefined {
    const { ws, env } = tenant;
    const name = blockName(ws, env, ms, firstId);
    const kept = this.keptBlock(name);
    if (kept) return kept;
    const value = this.db.get([ws, env, ms, firstId]) as Uint8Array | undefined;
    if (value === undefined) return undefined;
    const pointer = pointerOf(value);
    return pointer ? this.partSlice(tenant, ms, firstId, pointer) : this.keep(name, Block.decode(ms, value));
  }

  /** decode decodes a value of the entries db: a block, or a merged block read out of its part; undefined once retention took the part. */
  decode(tenant: Tenant, ms: number, firstId: string, value: Uint8Array): Block | undefined {
    const pointer = pointerOf(value);
    return pointer ? this.partSlice(tenant, ms, firstId, pointer) : Block.decode(ms, value);
  }

  /** partSlice reads a merged block out of its part, which is kept decoded for the part's other blocks; undefined once retention took the part. */
  private partSlice(tenant: Tenant, ms: number, firstId: string, pointer: Pointer): Block | undefined {
    const { ws, env } = tenant;
    const key = partOf(this.parts, ws, env, ms, firstId);
    if (!key) return undefined; // retention deleted the part and its blocks since the pointer was read
    const name = partName(ws, env, key.ms, key.firstId);
    let part = this.decodedParts.get(name);
    if (part)
      this.decodedParts.delete(name); // to the end: the most recently used
    else {
      const value = this.parts.get([ws, env, key.ms, key.firstId]) as Uint8Array | undefined;
      if (value === undefined) return undefined; // retention deleted the part and its blocks since the pointer was read
      part = Block.decode(key.ms, value);
      if (this.decodedParts.size >= PARTS_KEPT) this.decodedParts.delete(this.decodedParts.keys().next().value!);
    }
    this.decodedParts.set(name, part);
    return part.slice(ms, pointer.start, pointer.size);
  }

  private keptBlock(name: string): Block | undefined {
    const block = this.decoded.get(name);
    if (block) {
      this.decoded.delete(name); // to the end: the most recently used
      this.decoded.set(name, block);
    }
    return block;
  }

  private keep(name: string, block: Block): Block {
    if (!block.packed) return block; // an unpacked block decodes for nothing
    this.decoded.set(name, block);
    if (this.decoded.size > DECODED_KEPT) this.decoded.delete(this.decoded.keys().next().value!);
    return block;
  }

  /**
   * readTransient is read into lmdb-js's reused buffer instead of a new copy: the block is valid only until
   * the next read of this store, so a caller reads what it needs of it at once (counting reads thousands of blocks).
   * `keep: false` is for a read of many blocks, none read again: a packed one is then not copied out either.
   */
  readTransient(tenant: Tenant, ms: number, firstId: string, keep = true): Block | undefined {
    const { ws, env } = tenant;
    const name = blockName(ws, env, ms, firstId);
    const kept = this.keptBlock(name);
    if (kept) return kept;
    const value = this.db.getBinaryFast([ws, env, ms, firstId]);
    if (value === undefined) return undefined;
    const pointer = pointerOf(value); // read before the part's read reuses the buffer
    if (pointer) return this.partSlice(tenant, ms, firstId, pointer);
    // a packed block is small beside what it decompresses: copied out and kept, the read that follows the test is free
    // the copy as lmdb-js's getBinary makes it: the reused buffer's length is set per read, and Buffer's slice is a view
    if (!keep) return Block.decode(ms, value);
    return Block.isPacked(value) ? this.keep(name, Block.decode(ms, Uint8Array.prototype.slice.call(value, 0, value.length))) : Block.decode(ms, value);
  }

  /**
   * size is the number of entries of a block, read without decoding it; undefined once it is deleted. Blocks
   * never change, so sizes are kept (up to SIZES_KEPT blocks): lmdb-js copies a whole value even to read its first bytes.
   */
  size(tenant: Tenant, ms: number, firstId: string): number | undefined {
    const { ws, env } = tenant;
    const name = blockName(ws, env, ms, firstId);
    const kept = this.sizes.get(name);
    if (kept !== undefined) return kept;
    const value = this.db.getBinaryFast([ws, env, ms, firstId]);
    if (value === undefined) return undefined;
    const n = pointerOf(value)?.size ?? Block.sizeOf(value);
    if (this.sizes.size < SIZES_KEPT) this.sizes.set(name, n);
    return n;
  }
}
