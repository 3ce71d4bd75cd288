// keys: storage's key vocabulary: a range of keys to scan, a reference to a block, and how a user's string stands
// in an LMDB key.
//
// lmdb-js keys are ordered-binary arrays. A string element shorter than 64 UTF-16 units is written
// code unit by code unit, with the bytes 0–4 escaped, so it reads back exactly whatever it holds.
// A longer one is written as raw UTF-8: a U+0000–U+0004 inside it ends or escapes the element, and
// what follows can even decode as a number, so such a key reads back as something else. A string of
// 64 units or more therefore stands in a key as its SHA-256 instead, which is printable ASCII and at
// least 64 units long, so it can never equal a string kept as itself.
import type { Environment } from "../schema.ts";

/** Strings shorter than this many UTF-16 units stand in keys as themselves. */
export const KEPT_MAX = 63;

/** textKey is how a user's string (a tag, an action, a name) stands in a key: itself when short, else its hash. */
export function textKey(text: string): string {
  if (text.length <= KEPT_MAX) return text;
  const units = new Uint16Array(text.length); // its UTF-16 units, not UTF-8, which would merge lone surrogates into U+FFFD
  for (let i = 0; i < text.length; i++) units[i] = text.charCodeAt(i);
  return `sha256:${new Bun.CryptoHasher("sha256").update(units).digest("hex")}`;
}

/** Tenant names the entries of one workspace environment: every read and write of the store is a tenant's. */
export interface Tenant {
  readonly ws: string;
  readonly env: Environment;
}

/** ScanRange is a range of server time to read, newest first, optionally after a cursor. */
export interface ScanRange {
  /** inclusive lower bound on serverMs */
  fromMs: number;
  /** exclusive upper bound on serverMs */
  toMs: number;
  /** resume strictly after this entry in the (serverMs desc, id desc) order */
  after?: { ms: number; id: string };
}

/** BlockRef names a block and, when known, the positions of the entries that may match. */
export interface BlockRef {
  ms: number;
  firstId: string;
  /** null: every entry of the block */
  positions: number[] | null;
}

/** newer orders block references as reads want them: newest first, by (ms, firstId). */
export const newer = (a: Pick<BlockRef, "ms" | "firstId">, b: Pick<BlockRef, "ms" | "firstId">): boolean =>
  a.ms > b.ms || (a.ms === b.ms && a.firstId > b.firstId);

/**
 * rangeKeys turns a scan range into the key suffix to start a reverse scan at ([ms] or [ms, id] for a cursor)
 * and the lower bound; start is undefined when the range is empty.
 */
export function rangeKeys(range: ScanRange): { start: (number | string)[] | undefined; fromMs: number } {
  const { after } = range;
  let top = Math.min(range.toMs, 8.64e15);
  if (after && after.ms < top) top = after.ms + 1; // only blocks at or below the cursor's millisecond matter
  if (top <= range.fromMs) return { start: undefined, fromMs: range.fromMs };
  return { start: after && after.ms + 1 === top ? [after.ms, after.id] : [top], fromMs: range.fromMs };
}
