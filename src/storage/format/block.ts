// block: one block of entries (one write, one server millisecond) read from its stored value (block-encode.ts makes
// it). Each column is its own value inside the block, opened only when first read, and read one entry at a
// time (columns.ts and its siblings): a page of 50 decodes 50 messages of a block, not 1,000. The objects column gives
// one JSON text per entry, parsed only for the entries a read needs, and stores them as shapes and
// leaves (shaped.ts). Columns are stored compressed (packed.ts), messages in frames, so a read of one
// entry decompresses one frame.
import type { Level } from "../../schema.ts";
import { float64Array, packr, type Reader } from "./columns.ts";
import { dictColumn, dictListColumn, dictListReader, dictReader, type DictColumn, type DictListColumn } from "./dict-column.ts";
import { textReader } from "./text-column.ts";
import { foldText, isFolded, textEntriesFolding, type FoldedText, textEntriesWith } from "./text-search.ts";
import { FramedObjects, asciiIdReader, framedTextReader, idReader } from "./block-readers.ts";
import { idsReader } from "./id-column.ts";
import { rawSize } from "./raw-size.ts";
import { isFramed, unpackWhole } from "./packed.ts";
import { shapesOf, textOf } from "./numbered-text.ts";
import { type Scalars, ShapedColumn, isShaped } from "./shaped.ts";
import { DetachedEntry, EntryView, type Entry, type Objects } from "./entry-view.ts";
import type { StoredBlock } from "./block-encode.ts";

export { EntryView, storedObjectsText, type Entry } from "./entry-view.ts";

/** Entries in one block at most. */
export const BLOCK_MAX = 1000;

/** The columns, in the order they are stored. */
// biome-ignore lint/suspicious/noConstEnum: used in this file alone, where Bun inlines its members
const enum Col {
  Id,
  Level,
  Action,
  Message,
  Tags,
  ClientMs,
  Objects,
}
/** RECORD_HEAD is how every stored block value starts: a record structure 0x40 of keys v, n, c (see Block.sizeOf). */
const RECORD_HEAD = [0xd4, 0x72, 0x40, 0x93, 0xa1, 0x76, 0xa1, 0x6e, 0xa1, 0x63];

/** Opened is what a stored value's columns decoded to, shared by a merged part and every block read out of it (part.ts). */
interface Opened {
  readers: Reader<unknown>[];
  /** each column's bytes as columns.ts encodes them, decompressed (format 6) when first needed whole */
  unpacked: (Uint8Array | null | undefined)[];
  /** the messages' shapes (numbered-text.ts), searched for needles without a digit */
  messageShapes?: Uint8Array;
  /** searched by every case-insensitive needle of a query: the texts folded, and the shapes folded for needles without a digit */
  foldedMessages?: FoldedText;
  foldedShapes?: FoldedText;
  /** the objects column, when it is shaped whole */
  shaped?: ShapedColumn;
  /** the objects column, when it is in frames */
  framedObjects?: FramedObjects;
  /** every entry's client time, once a count asked for them all */
  clientTimes?: Float64Array;
}

/**
 * Block is a decoded block; a column is opened the first time any entry's field of it is read. A block merged into a
 * part (merge.ts) is read as a slice of the part's value: entries [base, base + size) of it.
 */
export class Block {
  private readonly objects: (Objects | null | undefined)[] = []; // parsed as first asked for: a scan asks for each
  private constructor(
    readonly serverMs: number,
    readonly size: number,
    private readonly stored: StoredBlock,
    private readonly base = 0,
    private readonly opened: Opened = { readers: [], unpacked: [] },
  ) {}

  /** slice is entries [start, start + size) of this value as a block of its own, of server millisecond `serverMs`: a block merged into a part. */
  slice(serverMs: number, start: number, size: number): Block {
    if (!(start >= 0 && size >= 0 && this.base + start + size <= this.stored.n))
      throw new Error(
        `a part pointer (${start}, ${size}) runs past its part of ${this.stored.n} entries: the data directory is damaged; restore it from a backup`,
      );
    return new Block(serverMs, size, this.stored, this.base + start, this.opened);
  }

  /** local maps ascending positions in the whole stored value to this block's, dropping those outside it. */
  private local(positions: number[]): number[] {
    if (this.base === 0 && this.size === this.stored.n) return positions;
    const out: number[] = [];
    for (const p of positions) if (p >= this.base && p < this.base + this.size) out.push(p - this.base);
    return out;
  }

  /**
   * sizeOf is the entry count of a stored block value, read off its first bytes without decoding it: the msgpack record
   * {v, n, c} as this Packr writes it starts with its structure (keys v, n, c), then v as a fixint and n as a
   * fixint, uint8 or uint16. Any other start is decoded in full, so the answer is always the block's size.
   */
  static sizeOf(value: Uint8Array): number {
    let fixed = value.length > 13;
    for (let k = 0; fixed && k < RECORD_HEAD.length; k++) fixed = value[k] === RECORD_HEAD[k];
    if (fixed && value[10] >= 3 && value[10] <= 6) {
      const b = value[11];
      if (b < 0x80) return b;
      if (b === 0xcc) return value[12];
      if (b === 0xcd) return (value[12] << 8) | value[13];
    }
    return (packr.unpack(value) as StoredBlock).n;
  }

  /** isPacked tells whether a stored block value is of format 6 (packed columns), from its first bytes when it can. */
  static isPacked(value: Uint8Array): boolean {
    let fixed = value.length > 13;
    for (let k = 0; fixed && k < RECORD_HEAD.length; k++) fixed = value[k] === RECORD_HEAD[k];
    return fixed ? value[10] === 6 : (packr.unpack(value) as StoredBlock).v >= 6;
  }

  /** decode reads a block value. */
  static decode(serverMs: number, value: Uint8Array): Block {
    const stored = packr.unpack(value) as StoredBlock;
    return new Block(serverMs, stored.n, stored);
  }

  /** packed tells whether the block's columns are compressed (format 6): decoding it again costs their decompression again. */
  get packed(): boolean {
    return this.stored.v >= 6;
  }

  private read<T>(c: Col, i: number): T {
    return ((this.opened.readers[c] ??= this.open(c)) as Reader<T>)(this.base + i);
  }

  /** column gives column c's bytes as columns.ts encodes them (null: the block has no objects). */
  private column(c: Col): Uint8Array | null {
    let bytes = this.opened.unpacked[c];
    if (bytes === undefined) {
      const stored = this.stored.c[c];
      this.opened.unpacked[c] = bytes =
        stored === null || this.stored.v < 6 ? stored : unpackWhole(stored, this.stored.n, c === Col.Message ? textOf : undefined);
    }
    return bytes;
  }

  private open(c: Col): Reader<unknown> {
    const { v, n, c: cols } = this.stored;
    if (cols[c] === null) return () => null;
    if (c === Col.Id && v >= 6) return idsReader(cols[c]!, n, asciiIdReader);
    if (c === Col.Objects && v >= 6 && isFramed(cols[c]!)) {
      const framed = this.framedObjectsOf(cols[c]!);
      return (i) => framed.text(i);
    }
    // a scan that unpacked the whole column already serves the reads of single entries too
    if (v >= 6 && (c === Col.Message || c === Col.Objects) && isFramed(cols[c]!) && this.opened.unpacked[c] === undefined) return framedTextReader(cols[c]!, n);
    const bytes = this.column(c)!;
    if (c === Col.Objects && isShaped(bytes)) {
      const shaped = this.shapedObjects(bytes);
      return (i) => shaped.text(i);
    }
    if (c === Col.Id && v >= 4) return idReader(bytes, n);
    if (v < 5) {
      const values = packr.unpack(bytes) as unknown[];
      return (i) => values[i];
    }
    if (c === Col.Level || c === Col.Action) return dictReader(bytes, n);
    if (c === Col.Tags) return dictListReader(bytes, n);
    if (c === Col.ClientMs) {
      const times = (this.opened.clientTimes ??= float64Array(bytes));
      return (i) => times[i];
    }
    return textReader(bytes, n);
  }

  private framedObjectsOf(bytes: Uint8Array): FramedObjects {
    return (this.opened.framedObjects ??= new FramedObjects(bytes, this.stored.n));
  }

  private shapedObjects(bytes: Uint8Array): ShapedColumn {
    return (this.opened.shaped ??= new ShapedColumn(bytes, this.stored.n));
  }

  id(i: number): string {
    return this.read(Col.Id, i);
  }
  level(i: number): Level {
    return this.read(Col.Level, i);
  }
  action(i: number): string {
    return this.read(Col.Action, i);
  }
  message(i: number): string | null {
    return this.read(Col.Message, i);
  }
  tags(i: number): string[] {
    return this.read(Col.Tags, i);
  }
  clientMs(i: number): number {
    return this.read(Col.ClientMs, i);
  }
  objectsOf(i: number): Objects | null {
    if (this.stored.c[Col.Objects] === null) return null;
    let o = this.objects[i];
    if (o === undefined) {
      const text = this.read<string | null>(Col.Objects, i);
      this.objects[i] = o = text === null ? null : (JSON.parse(text) as Objects);
    }
    return o;
  }
  /**
   * messagesWith lists, ascending, the entries whose message holds `utf8`, read off the stored bytes without decoding
   * a message; undefined (every entry may) for blocks of earlier formats.
   */
  messagesWith(utf8: Uint8Array): number[] | undefined {
    return this.stored.v < 5 ? undefined : this.local(textEntriesWith(this.messagesFor(utf8), this.stored.n, utf8));
  }
  /** messagesFolding is messagesWith for a lowercase ASCII needle of a case-insensitive search (text-search.ts textEntriesFolding). */
  messagesFolding(lowered: Uint8Array): number[] | undefined {
    if (this.stored.v < 5) return undefined;
    const opened = this.opened;
    const shapes = this.searchesShapes(lowered);
    let folded = shapes ? opened.foldedShapes : opened.foldedMessages;
    if (folded === undefined || !isFolded(folded)) {
      folded = foldText(this.messagesFor(lowered), this.stored.n);
      if (shapes) opened.foldedShapes = folded;
      else opened.foldedMessages = folded;
    }
    return this.local(textEntriesFolding(folded, lowered));
  }
  /**
   * messagesFor is the message column to search for `needle`: the shapes when it has no digit and no hole, where it is
   * found exactly as in the texts (numbered-text.ts), else the texts.
   */
  private messagesFor(needle: Uint8Array): Uint8Array {
    if (!this.searchesShapes(needle)) return this.column(Col.Message)!;
    return (this.opened.messageShapes ??= unpackWhole(this.stored.c[Col.Message]!, this.stored.n, shapesOf));
  }
  private searchesShapes(needle: Uint8Array): boolean {
    return this.stored.v >= 6 && this.stored.c[Col.Message] !== null && !needle.some((b) => b === 0 || (b >= 0x30 && b <= 0x39));
  }
  /** objectsWith is messagesWith for the entries' objects, as the JSON text they are stored in. */
  objectsWith(utf8: Uint8Array): number[] | undefined {
    const stored = this.stored.c[Col.Objects];
    if (stored !== null && this.stored.v >= 6 && isFramed(stored))
      return this.local(this.framedObjectsOf(stored).entriesWith(utf8, this.base, this.base + this.size));
    const bytes = this.column(Col.Objects);
    if (bytes === null) return [];
    if (this.stored.v < 5) return undefined;
    if (!isShaped(bytes)) return this.local(textEntriesWith(bytes, this.stored.n, utf8));
    const found = this.shapedObjects(bytes).entriesWith(utf8);
    return found && this.local(found);
  }
  /** objectsText is entry i's objects as their stored JSON text (null: it has none), unparsed; undefined in earlier formats. */
  objectsText(i: number): string | null | undefined {
    if (this.stored.v < 5) return undefined;
    if (this.stored.c[Col.Objects] === null) return null;
    return this.read<string | null>(Col.Objects, i);
  }
  /** objectScalars is entry i's objects as a shape and its scalars (shaped.ts; null: it has none); undefined when they are stored as text. */
  objectScalars(i: number): Scalars | null | undefined {
    if (this.stored.v < 5) return undefined;
    const stored = this.stored.c[Col.Objects];
    if (stored === null) return null;
    if (this.stored.v >= 6 && isFramed(stored)) return this.framedObjectsOf(stored).scalars(this.base + i);
    const bytes = this.column(Col.Objects)!;
    return isShaped(bytes) ? this.shapedObjects(bytes).scalars(this.base + i) : undefined;
  }
  /** codes opens the level or action column for counting: undefined for blocks of earlier formats (read them entry by entry). */
  codes(column: "level" | "action"): DictColumn | undefined {
    if (this.stored.v < 5) return undefined;
    const whole = dictColumn(this.column(column === "level" ? Col.Level : Col.Action)!, this.stored.n);
    return this.base === 0 && this.size === this.stored.n ? whole : { values: whole.values, codes: whole.codes.subarray(this.base, this.base + this.size) };
  }
  /** clientTimes is the block's entries' client times as one array, for counting: undefined for blocks of earlier formats. */
  clientTimes(): Float64Array | undefined {
    if (this.stored.v < 5) return undefined;
    const whole = (this.opened.clientTimes ??= float64Array(this.column(Col.ClientMs)!));
    return this.base === 0 && this.size === this.stored.n ? whole : whole.subarray(this.base, this.base + this.size);
  }
  /** tagCodes opens the tags column for counting: undefined for blocks of earlier formats. */
  tagCodes(): DictListColumn | undefined {
    if (this.stored.v < 5) return undefined;
    const whole = dictListColumn(this.column(Col.Tags)!, this.stored.n);
    // starts index the codes of the whole value: a slice of them keeps every entry's range
    return this.base === 0 && this.size === this.stored.n ? whole : { ...whole, starts: whole.starts.subarray(this.base, this.base + this.size + 1) };
  }
  /** rawSize is the block's entries' raw JSON in bytes, without their environment's name (raw-size.ts). */
  rawSize(): number {
    let raw = 0;
    for (let i = 0; i < this.size; i++) {
      const e = this.entry(i);
      const text = this.objectsText(i);
      const objects =
        text !== undefined
          ? text
          : e.actor === null && e.target === null && e.context === null && e.metadata === null
            ? null
            : JSON.stringify([e.actor, e.target, e.context, e.metadata]);
      raw += rawSize(e, objects);
    }
    return raw;
  }
  /** entries gives a view of each entry, in position order. */
  entries(): Entry[] {
    return Array.from({ length: this.size }, (_, i) => this.entry(i));
  }
  /** entry gives a view of entry i. */
  entry(i: number): Entry {
    return new EntryView(this, i);
  }
  /** detach copies entry i out of the block, for a block read from a buffer that the next read reuses. */
  detach(i: number): Entry {
    return new DetachedEntry(this, i);
  }
  /** indexOf finds an entry by id (ids ascend within a block). */
  indexOf(id: string): number {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = this.id(mid);
      if (m === id) return mid;
      if (m < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}
