// entry-view: an entry as read out of a block (block.ts): a view that reads each field when asked, or a copy.
import type { Level } from "../../schema.ts";

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

/** Objects are an entry's four objects, as a block stores them together. */
export type Objects = [Entry["actor"], Entry["target"], Entry["context"], Entry["metadata"]];

/** EntrySource is what a view reads an entry's fields from: a block (block.ts). */
export interface EntrySource {
  id(i: number): string;
  level(i: number): Level;
  action(i: number): string;
  message(i: number): string | null;
  tags(i: number): string[];
  clientMs(i: number): number;
  objectsOf(i: number): Objects | null;
  /** the entry's objects as their stored JSON text (null: none); undefined for blocks of earlier formats */
  objectsText(i: number): string | null | undefined;
}

/** EntryView reads entry i of block b; the executor moves one view along a block to test entries without allocating. */
export class EntryView implements Entry {
  constructor(
    public b: EntrySource,
    public i: number,
  ) {}
  get id() {
    return this.b.id(this.i);
  }
  get level() {
    return this.b.level(this.i);
  }
  get action() {
    return this.b.action(this.i);
  }
  get message() {
    return this.b.message(this.i);
  }
  get tags() {
    return this.b.tags(this.i);
  }
  get clientMs() {
    return this.b.clientMs(this.i);
  }
  get actor() {
    return this.b.objectsOf(this.i)?.[0] ?? null;
  }
  get target() {
    return this.b.objectsOf(this.i)?.[1] ?? null;
  }
  get context() {
    return this.b.objectsOf(this.i)?.[2] ?? null;
  }
  get metadata() {
    return this.b.objectsOf(this.i)?.[3] ?? null;
  }
}

/** DetachedEntry is an entry copied out of its block: its fields, and its objects as their stored JSON text. */
export class DetachedEntry implements Entry {
  readonly id: string;
  readonly level: Level;
  readonly action: string;
  readonly message: string | null;
  readonly tags: string[];
  readonly clientMs: number;
  /** the objects' stored JSON text (null: none); undefined for blocks of earlier formats, whose objects are parsed */
  readonly objectsText: string | null | undefined;
  private objects: Objects | null | undefined;
  constructor(b: EntrySource, i: number) {
    this.id = b.id(i);
    this.level = b.level(i);
    this.action = b.action(i);
    this.message = b.message(i);
    this.tags = b.tags(i);
    this.clientMs = b.clientMs(i);
    this.objectsText = b.objectsText(i);
    if (this.objectsText === undefined) this.objects = b.objectsOf(i);
  }
  private parsed(): Objects | null {
    if (this.objects === undefined) this.objects = this.objectsText ? (JSON.parse(this.objectsText) as Objects) : null;
    return this.objects;
  }
  get actor() {
    return this.parsed()?.[0] ?? null;
  }
  get target() {
    return this.parsed()?.[1] ?? null;
  }
  get context() {
    return this.parsed()?.[2] ?? null;
  }
  get metadata() {
    return this.parsed()?.[3] ?? null;
  }
}

/** storedObjectsText is an entry's objects as their stored JSON text (null: it has none) when read from a block of this format; else undefined. */
export function storedObjectsText(e: Entry): string | null | undefined {
  if (e instanceof EntryView) return e.b.objectsText(e.i);
  return e instanceof DetachedEntry ? e.objectsText : undefined;
}
