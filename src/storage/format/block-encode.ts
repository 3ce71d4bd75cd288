// block-encode: a block's stored value made from its entries, column by column (block.ts reads it back). Columns
// are encoded before the ids are drawn (on any thread), and assembled with the ids into the value LMDB keeps.

import { packr } from "./columns.ts";
import { encodeDict, encodeDictList } from "./dict-column.ts";
import type { Entry } from "./entry-view.ts";
import { packIds } from "./id-column.ts";
import { encodeNumberedText, isNumberedText } from "./numbered-text.ts";
import { packFramed, packFramedSmallest, packNumbers, packPlain, packWhole } from "./packed.ts";
import { rawSize } from "./raw-size.ts";
import { encodeShaped } from "./shaped.ts";
import { compactText, encodeText } from "./text-column.ts";

/** StoredBlock is a block as its value holds it (msgpack record {v, n, c}). */
export interface StoredBlock {
  /**
   * 6: the columns of 5, each packed (packed.ts); the ids as id-column.ts stores them.
   * 5 (still read): the columns of columns.ts; the ids one msgpack string of the ids joined (each 36 characters).
   * 4 (still read): every column a msgpack array but the ids, joined as in 5. 3 (still read): the ids an array too.
   */
  v: 3 | 4 | 5 | 6;
  n: number;
  /** one buffer per column; the objects column (JSON texts) is null when no entry has any object */
  c: [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array | null];
}

/** encodeBlock packs entries (ids ascending) into one value, column by column. */
export function encodeBlock(entries: readonly Entry[]): Uint8Array {
  return assembleBlock(
    entries.map((e) => e.id),
    encodeColumns(entries),
  );
}

/** Columns are a block's packed columns but the ids: what can be encoded before the ids are drawn. */
export type Columns = [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array | null];

/** encodeColumns packs every column of a block but the ids (any thread may call it). */
export function encodeColumns(entries: readonly Omit<Entry, "id">[]): Columns {
  return encodeSized(entries).columns;
}

/** encodeSized is encodeColumns with the entries' raw JSON size (raw-size.ts), measured from the texts it encodes. */
export function encodeSized(entries: readonly Omit<Entry, "id">[]): { columns: Columns; raw: number } {
  return encodeWithObjects(
    entries,
    entries.map((e): string | null => {
      if (e.actor === null && e.target === null && e.context === null && e.metadata === null) return null;
      return JSON.stringify([e.actor, e.target, e.context, e.metadata]); // they came from JSON: it keeps them exactly
    }),
  );
}

/** encodeWithObjects is encodeSized for entries whose objects are given as their stored JSON text (null: none). */
export function encodeWithObjects(entries: readonly Omit<Entry, "id">[], objects: (string | null)[]): { columns: Columns; raw: number } {
  const anyObject = objects.some((o) => o !== null);
  const messages = entries.map((e) => e.message);
  const n = entries.length;
  let raw = 0;
  for (let i = 0; i < n; i++) raw += rawSize(entries[i], objects[i]);
  const columns: Columns = [
    packCounted(encodeDict(entries.map((e) => e.level))),
    packCounted(encodeDict(entries.map((e) => e.action))),
    // a frame's shapes and numbers, unless its text compresses smaller (numbers that repeat, as addresses in some logs);
    // after the first frame only the form the frame before kept is made, as a block's frames are most often alike
    packFramedSmallest(n, (start, end, before) => {
      const text = encodeText(messages.slice(start, end));
      const numbered = before === undefined || isNumberedText(before) ? encodeNumberedText(text, end - start) : undefined;
      if (numbered && before !== undefined) return [numbered];
      const compact = compactText(text, end - start);
      return numbered ? [numbered, compact] : [compact];
    }),
    packWhole(encodeDictList(entries.map((e) => e.tags))),
    packNumbers(entries.map((e) => e.clientMs)),
    anyObject ? objectsColumn(objects) : null,
  ];
  return { columns, raw };
}

/**
 * packCounted stores a column that hits and facets count block after block: as it is, since a decompression each
 * would cost more than the byte or so an entry it saves, unless its dictionary is large (hundreds of distinct actions).
 */
const packCounted = (bytes: Uint8Array): Uint8Array => (bytes.length < COUNTED_WHOLE_AT ? packPlain(bytes) : packWhole(bytes));
const COUNTED_WHOLE_AT = 4096;

// the objects in frames, each as shapes and leaves (shaped.ts), or as text when some text of it does not split
function objectsColumn(objects: (string | null)[]): Uint8Array {
  return packFramed(objects.length, (start, end) => {
    const frame = objects.slice(start, end);
    return encodeShaped(frame) ?? encodeText(frame);
  });
}

/**
 * assembleBlock packs a block's ids (ascending) with its other columns into the stored value. Columns that a cluster
 * front encoded before format 6 (its writes stay in the stream) start with a msgpack array, never with a packed tag.
 */
export function assembleBlock(ids: readonly string[], columns: Columns): Uint8Array {
  const packed = columns[0][0] <= 2;
  // format 5 ids: one string packs far faster than a thousand short ones
  const stored: StoredBlock = packed
    ? { v: 6, n: ids.length, c: [packIds(ids), ...columns] }
    : { v: 5, n: ids.length, c: [packr.pack(ids.join("")), ...columns] };
  return packr.pack(stored);
}

/** blockWords is a block's full-text document: its distinct actions and its messages (the worker splits the words). */
export function blockWords(entries: readonly Pick<Entry, "action" | "message">[]): string {
  const parts: string[] = [];
  const actions = new Set<string>(); // actions repeat within a block: index each once
  for (const e of entries) {
    if (!actions.has(e.action)) {
      actions.add(e.action);
      parts.push(e.action);
    }
    if (e.message !== null) parts.push(e.message);
  }
  return parts.join("\n"); // "\n" is no letter or digit, so words never run across two parts
}
