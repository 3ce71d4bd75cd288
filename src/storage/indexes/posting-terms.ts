// posting-terms: what a block's postings are: per level, tag and exact action, the positions of its entries that carry
// it; stored with the block's postings (postings.ts) and sent from the ingest worker with the block.
import type { Entry } from "../format/block.ts";

export type PostingKind = "l" | "t" | "a";

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
  for (const [kind, map] of [
    ["l", levels],
    ["a", actions],
    ["t", tags],
  ] as const)
    for (const [term, at] of map) out.push([kind, term, at]);
  return out;
}

/** blockTerms is a block's postings as stored: termsOf with each term's positions encoded. */
export function blockTerms(entries: readonly Pick<Entry, "level" | "action" | "tags">[]): BlockTerms {
  return termsOf(entries).map(([kind, term, at]) => [kind, term, encodePositions(at, entries.length)]);
}

/** encodePositions stores positions, or nothing when they cover the whole block. */
function encodePositions(positions: number[], blockSize: number): Uint8Array {
  if (positions.length === blockSize) return new Uint8Array(0);
  return new Uint8Array(Uint16Array.from(positions).buffer);
}

/** decodePositions reads positions as blockTerms stores them: null when they cover the whole block. */
export function decodePositions(value: Uint8Array): number[] | null {
  if (value.byteLength === 0) return null;
  const copy = value.slice(); // aligned copy: LMDB may reuse the buffer
  return [...new Uint16Array(copy.buffer, 0, copy.byteLength / 2)];
}

/** BlockTerms are a block's postings: kind, term and the encoded positions of its entries that carry it. */
export type BlockTerms = readonly [PostingKind, string, Uint8Array][];
