// postings: which blocks hold entries with a given level, tag or exact action, and where in the block.
//
// Key layout (db `postings`): [workspaceId, environment, kind, term, serverMs, firstId] → positions,
// kind "l" level, "t" tag, "a" action. The value lists the matching entries' positions in the block
// as little-endian uint16; an empty value means every entry of the block. One key per block and
// term, not per entry, keeps writes few; a reverse range scan yields blocks newest first.
import type { Database } from "lmdb";
import type { Environment } from "../schema.ts";
import type { Entry } from "./block.ts";
import type { ScanRange } from "./entries.ts";

export type PostingKind = "l" | "t" | "a";

const TERM_KEY_MAX = 200; // UTF-16 units; LMDB keys hold at most ~1,978 bytes, and actions may carry much surrounding space

/** termKey is how a term stands in a key: as itself, or when long as a prefix and the SHA-256 of the whole. */
export function termKey(term: string): string {
  if (term.length <= TERM_KEY_MAX) return term;
  return `${term.slice(0, 64)}#sha256:${new Bun.CryptoHasher("sha256").update(term).digest("hex")}`; // printable: ordered-binary keys do not keep NUL
}

/** BlockRef names a block and, when known, the positions of the entries that may match. */
export interface BlockRef {
  ms: number;
  firstId: string;
  /** null: every entry of the block */
  positions: number[] | null;
}

/** termsOf lists, per kind and term, the positions of a block's entries that carry it. */
export function termsOf(entries: readonly Pick<Entry, "level" | "action" | "tags">[]): [PostingKind, string, number[]][] {
  const levels = new Map<string, number[]>();
  const actions = new Map<string, number[]>();
  const tags = new Map<string, number[]>();
  const add = (map: Map<string, number[]>, term: string, i: number) => {
    const at = map.get(term);
    if (!at) map.set(term, [i]);
    else if (at[at.length - 1] !== i) at.push(i); // a tag twice in one entry is one position
  };
  for (let i = 0; i < entries.length; i++) {
    const e = entries[i];
    add(levels, e.level, i);
    add(actions, e.action, i);
    for (const tag of e.tags) add(tags, tag, i);
  }
  const out: [PostingKind, string, number[]][] = [];
  for (const [kind, map] of [["l", levels], ["a", actions], ["t", tags]] as const) for (const [term, at] of map) out.push([kind, term, at]);
  return out;
}

/** encodePositions stores positions, or nothing when they cover the whole block. */
export function encodePositions(positions: number[], blockSize: number): Uint8Array {
  if (positions.length === blockSize) return new Uint8Array(0);
  return new Uint8Array(Uint16Array.from(positions).buffer);
}

function decodePositions(value: Uint8Array): number[] | null {
  if (value.byteLength === 0) return null;
  const copy = value.slice(); // aligned copy: LMDB may reuse the buffer
  return [...new Uint16Array(copy.buffer, 0, copy.byteLength / 2)];
}

/** Postings reads posting lists; EntryStore queues their puts with the block's. */
export class Postings {
  constructor(readonly db: Database) {}

  put(ws: string, env: Environment, kind: PostingKind, term: string, ms: number, firstId: string, positions: Uint8Array): Promise<unknown> {
    return this.db.put([ws, env, kind, termKey(term), ms, firstId], positions);
  }
  remove(ws: string, env: Environment, kind: PostingKind, term: string, ms: number, firstId: string): void {
    this.db.removeSync([ws, env, kind, termKey(term), ms, firstId]);
  }

  /** blocks yields the blocks holding a term within a range, newest first. */
  *blocks(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange): Generator<BlockRef> {
    const { start, fromMs } = rangeKeys(range);
    if (!start) return;
    const term = termKey(rawTerm);
    const end = [ws, env, kind, term, fromMs];
    for (const { key, value } of this.db.getRange({ start: [ws, env, kind, term, ...start], end, reverse: true, snapshot: false })) {
      const k = key as unknown[];
      yield { ms: k[4] as number, firstId: k[5] as string, positions: decodePositions(value as Uint8Array) };
    }
  }

  /** count counts the blocks holding a term within a range, stopping at `cap`. */
  count(ws: string, env: Environment, kind: PostingKind, rawTerm: string, range: ScanRange, cap: number): number {
    const { start, fromMs } = rangeKeys(range);
    if (!start) return 0;
    const term = termKey(rawTerm);
    let n = 0;
    for (const _ of this.db.getKeys({ start: [ws, env, kind, term, ...start], end: [ws, env, kind, term, fromMs], reverse: true, limit: cap, snapshot: false })) n++;
    return n;
  }
}

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
