// block: the columnar encoding of one block of entries (one write, one server millisecond).
// Text columns decode fast for scans and residual checks; the object fields are one
// msgpack buffer decoded only when an entry's objects are first needed.
import { Packr } from "msgpackr";
import type { Level } from "../schema.ts";

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

interface Columns {
  v: 1;
  id: string[];
  lv: Level[];
  ac: string[];
  ms: (string | null)[];
  tg: string[][];
  ct: number[];
  ob: Uint8Array | null; // msgpack of (Objects | null)[]; null when no entry has any object
}

const packr = new Packr({ useRecords: true, moreTypes: false, bundleStrings: false, copyBuffers: true }); // copies: LMDB reuses its read buffers

/** encodeBlock packs entries (ids ascending) into one value. */
export function encodeBlock(entries: readonly Entry[]): Uint8Array {
  let anyObject = false;
  const objects = entries.map((e): Objects | null => {
    if (e.actor === null && e.target === null && e.context === null && e.metadata === null) return null;
    anyObject = true;
    return [e.actor, e.target, e.context, e.metadata];
  });
  const columns: Columns = {
    v: 1,
    id: entries.map((e) => e.id),
    lv: entries.map((e) => e.level),
    ac: entries.map((e) => e.action),
    ms: entries.map((e) => e.message),
    tg: entries.map((e) => e.tags),
    ct: entries.map((e) => e.clientMs),
    ob: anyObject ? packr.pack(objects) : null,
  };
  return packr.pack(columns);
}

/** Block is a decoded block: columns plus lazily decoded objects. */
export class Block {
  private objects: (Objects | null)[] | undefined;
  private constructor(readonly serverMs: number, private readonly c: Columns) {}

  /** decode reads a block value; the buffer may be reused by LMDB afterwards. */
  static decode(serverMs: number, value: Uint8Array): Block {
    return new Block(serverMs, packr.unpack(value) as Columns);
  }

  get size(): number {
    return this.c.id.length;
  }
  id(i: number): string {
    return this.c.id[i];
  }
  level(i: number): Level {
    return this.c.lv[i];
  }
  action(i: number): string {
    return this.c.ac[i];
  }
  message(i: number): string | null {
    return this.c.ms[i];
  }
  tags(i: number): string[] {
    return this.c.tg[i];
  }
  clientMs(i: number): number {
    return this.c.ct[i];
  }
  objectsOf(i: number): Objects | null {
    if (this.c.ob === null) return null;
    this.objects ??= packr.unpack(this.c.ob) as (Objects | null)[];
    return this.objects[i];
  }
  /** entry gives a view of entry i. */
  entry(i: number): Entry {
    return new EntryView(this, i);
  }
  /** indexOf finds an entry by id (ids ascend within a block). */
  indexOf(id: string): number {
    let lo = 0;
    let hi = this.c.id.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const m = this.c.id[mid];
      if (m === id) return mid;
      if (m < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }
}

class EntryView implements Entry {
  constructor(private readonly b: Block, private readonly i: number) {}
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
