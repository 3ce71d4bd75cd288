// block: the columnar encoding of one block of entries (one write, one server millisecond).
// Each column is its own msgpack value inside the block, decoded only when first read: a scan of
// messages decodes messages, not ids or objects. The objects column holds one JSON text per entry,
// parsed only for the entries a read needs: a page of 50 does not decode a block's 1,000.
import { Packr } from "msgpackr";
import type { Level } from "../schema.ts";

/** Entries in one block at most. */
export const BLOCK_MAX = 1000;

/** Entry is one stored entry as the read side sees it; object fields may decode lazily. */
export interface Entry {
  readonly id: string;
  readonly level: Level;
  readonly action: string;
  readonly message: string | null;
  readonly tags: string[];
  readonly clientMs: number;
  readonly actor: Record<string, unknown> | null;
  readonly target: Record<string, unknown> | null;
  readonly context: Record<string, unknown> | null;
  readonly metadata: Record<string, unknown> | null;
}

type Objects = [Entry["actor"], Entry["target"], Entry["context"], Entry["metadata"]];

/** The columns, in the order they are stored; each is its own msgpack value, decoded when first read. */
const enum Col { Id, Level, Action, Message, Tags, ClientMs, Objects }
interface Stored {
  /** 4: the id column is one string of the ids joined (each 36 characters); 3: an array of ids */
  v: 3 | 4;
  n: number;
  /** one msgpack buffer per column; the objects column (JSON texts) is null when no entry has any object */
  c: [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array | null];
}

// LMDB hands out private copies of values, so decoded byte strings may share them without copying
const packr = new Packr({ useRecords: true, moreTypes: false, bundleStrings: false });

/** encodeBlock packs entries (ids ascending) into one value, column by column. */
export function encodeBlock(entries: readonly Entry[]): Uint8Array {
  return assembleBlock(entries.map((e) => e.id), encodeColumns(entries));
}

/** Columns are a block's packed columns but the ids: what can be encoded before the ids are drawn. */
export type Columns = [Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array, Uint8Array | null];

/** encodeColumns packs every column of a block but the ids (any thread may call it). */
export function encodeColumns(entries: readonly Omit<Entry, "id">[]): Columns {
  let anyObject = false;
  const objects = entries.map((e): string | null => {
    if (e.actor === null && e.target === null && e.context === null && e.metadata === null) return null;
    anyObject = true;
    return JSON.stringify([e.actor, e.target, e.context, e.metadata]); // they came from JSON: it keeps them exactly
  });
  return [
    packr.pack(entries.map((e) => e.level)),
    packr.pack(entries.map((e) => e.action)),
    packr.pack(entries.map((e) => e.message)),
    packr.pack(entries.map((e) => e.tags)),
    packr.pack(entries.map((e) => e.clientMs)),
    anyObject ? packr.pack(objects) : null,
  ];
}

/** assembleBlock packs a block's ids (ascending) with its other columns into the stored value. */
export function assembleBlock(ids: readonly string[], columns: Columns): Uint8Array {
  // one string packs far faster than a thousand short ones
  const stored: Stored = { v: 4, n: ids.length, c: [packr.pack(ids.join("")), ...columns] };
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

/** Block is a decoded block; a column is decoded the first time any entry's field of it is read. */
export class Block {
  private readonly cols: unknown[][] = [];
  private readonly objects = new Map<number, Objects | null>();
  private constructor(readonly serverMs: number, readonly size: number, private readonly stored: Stored) {}

  /** decode reads a block value. */
  static decode(serverMs: number, value: Uint8Array): Block {
    const stored = packr.unpack(value) as Stored;
    return new Block(serverMs, stored.n, stored);
  }

  private col<T>(c: Col): T[] {
    let values = this.cols[c];
    if (!values) {
      const bytes = this.stored.c[c];
      values = this.cols[c] = bytes === null ? [] : c === Col.Id && this.stored.v === 4 ? splitIds(packr.unpack(bytes) as string) : (packr.unpack(bytes) as unknown[]);
    }
    return values as T[];
  }

  id(i: number): string {
    return this.col<string>(Col.Id)[i];
  }
  level(i: number): Level {
    return this.col<Level>(Col.Level)[i];
  }
  action(i: number): string {
    return this.col<string>(Col.Action)[i];
  }
  message(i: number): string | null {
    return this.col<string | null>(Col.Message)[i];
  }
  tags(i: number): string[] {
    return this.col<string[]>(Col.Tags)[i];
  }
  clientMs(i: number): number {
    return this.col<number>(Col.ClientMs)[i];
  }
  objectsOf(i: number): Objects | null {
    if (this.stored.c[Col.Objects] === null) return null;
    let o = this.objects.get(i);
    if (o === undefined) {
      const text = this.col<string | null>(Col.Objects)[i];
      this.objects.set(i, (o = text === null ? null : (JSON.parse(text) as Objects)));
    }
    return o;
  }
  /** entry gives a view of entry i. */
  entry(i: number): Entry {
    return new EntryView(this, i);
  }
  /** indexOf finds an entry by id (ids ascend within a block). */
  indexOf(id: string): number {
    const ids = this.col<string>(Col.Id);
    let lo = 0;
    let hi = ids.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = ids[mid];
      if (m === id) return mid;
      if (m < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

const ID_LENGTH = 36; // canonical UUID text

function splitIds(joined: string): string[] {
  const ids = new Array<string>(joined.length / ID_LENGTH);
  for (let i = 0; i < ids.length; i++) ids[i] = joined.slice(i * ID_LENGTH, (i + 1) * ID_LENGTH);
  return ids;
}

/** EntryView reads entry i of block b; the executor moves one view along a block to test entries without allocating. */
export class EntryView implements Entry {
  constructor(public b: Block, public i: number) {}
  get id() { return this.b.id(this.i); }
  get level() { return this.b.level(this.i); }
  get action() { return this.b.action(this.i); }
  get message() { return this.b.message(this.i); }
  get tags() { return this.b.tags(this.i); }
  get clientMs() { return this.b.clientMs(this.i); }
  get actor() { return this.b.objectsOf(this.i)?.[0] ?? null; }
  get target() { return this.b.objectsOf(this.i)?.[1] ?? null; }
  get context() { return this.b.objectsOf(this.i)?.[2] ?? null; }
  get metadata() { return this.b.objectsOf(this.i)?.[3] ?? null; }
}
