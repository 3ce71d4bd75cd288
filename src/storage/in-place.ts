// in-place: reading an LMDB value without copying it, for reads that only look at a few of its bytes.
import type { Database, Key } from "lmdb";

/**
 * readInPlace reads a value in lmdb-js's shared buffer, valid until the next read on this thread. Its Buffer spans the
 * whole shared buffer with `length` set to the value's size, so it is cut to that length.
 */
export function readInPlace(db: Database, key: Key): Uint8Array | undefined {
  const value = db.getBinaryFast(key) as Uint8Array | undefined;
  return value?.subarray(0, value.length);
}
