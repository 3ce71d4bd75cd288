// block-readers: how a block's id and framed text columns are read one entry at a time (block.ts opens them).
import { packr, type Reader } from "./columns.ts";
import { textReader } from "./text-column.ts";
import { textEntriesWith } from "./text-search.ts";
import { frameOf, frameSize, framesOf, unpackFrame } from "./packed.ts";
import { textOf } from "./numbered-text.ts";
import { type Scalars, ShapedColumn, isShaped } from "./shaped.ts";

const ID_LENGTH = 36; // canonical UUID text

/**
 * idReader reads the ids of formats 4 and 5 (a msgpack string of them joined). Ids are cut from it when first asked
 * for, then kept: sorting compares them often. A few are cut from the stored bytes, and the whole string is decoded
 * only once many are asked for.
 */
export function idReader(bytes: Uint8Array, n: number): Reader<string> {
  const ids = new Array<string | undefined>(n);
  const at = asciiStart(bytes, n * ID_LENGTH);
  let joined: string | undefined = at < 0 ? (packr.unpack(bytes) as string) : undefined;
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  let cut = 0;
  return (i) => {
    let id = ids[i];
    if (id === undefined) {
      if (joined === undefined && ++cut > WHOLE_AFTER) joined = raw.toString("latin1", at, at + n * ID_LENGTH);
      id = ids[i] =
        joined === undefined ? raw.toString("latin1", at + i * ID_LENGTH, at + (i + 1) * ID_LENGTH) : joined.slice(i * ID_LENGTH, (i + 1) * ID_LENGTH);
    }
    return id;
  };
}

// past this many ids cut one by one, decoding all of them at once costs less
const WHOLE_AFTER = 64;

/** asciiIdReader reads format 6's ids kept as text (id-column.ts): a few are cut from the bytes, many from one string of them all. */
export function asciiIdReader(bytes: Uint8Array, n: number): Reader<string> {
  const raw = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const ids = new Array<string | undefined>(n);
  let joined: string | undefined;
  let cut = 0;
  return (i) => {
    let id = ids[i];
    if (id === undefined) {
      if (joined === undefined && ++cut > WHOLE_AFTER) joined = raw.toString("latin1");
      id = ids[i] = joined === undefined ? raw.toString("latin1", i * ID_LENGTH, (i + 1) * ID_LENGTH) : joined.slice(i * ID_LENGTH, (i + 1) * ID_LENGTH);
    }
    return id;
  };
}

/** framedTextReader reads a framed text column one entry at a time, decompressing a frame (numbered-text.ts textOf) when one of its entries is first asked for. */
export function framedTextReader(bytes: Uint8Array, n: number): Reader<string | null> {
  const frames = framesOf(bytes);
  const per = frameOf(bytes);
  const readers: Reader<string | null>[] = [];
  return (i) => {
    const k = (i / per) | 0;
    const size = frameSize(n, k, per);
    const read = (readers[k] ??= textReader(textOf(unpackFrame(frames[k]), size), size));
    return read(i - k * per);
  };
}

/** ObjectsFrame is one frame of a framed objects column, opened: its texts and its search. */
interface ObjectsFrame {
  text(i: number): string | null;
  /** undefined: the frame is JSON text, not shapes */
  scalars?(i: number): Scalars | null;
  entriesWith(utf8: Uint8Array): number[];
}

/**
 * FramedObjects reads an objects column stored in frames, each frame shapes and leaves (shaped.ts) or JSON text (the
 * columns before shapes), opened when one of its entries is first asked for: a page of 50 decompresses one frame.
 */
export class FramedObjects {
  private readonly frames: Uint8Array[];
  private readonly per: number;
  private readonly opened: ObjectsFrame[] = [];

  constructor(
    bytes: Uint8Array,
    private readonly n: number,
  ) {
    this.frames = framesOf(bytes);
    this.per = frameOf(bytes);
  }

  /** text is entry i's objects JSON text, or null. */
  text(i: number): string | null {
    const k = (i / this.per) | 0;
    return this.frame(k).text(i - k * this.per);
  }

  /** scalars is entry i's objects as a shape and its scalars (null: none); undefined when its frame is JSON text. */
  scalars(i: number): Scalars | null | undefined {
    const k = (i / this.per) | 0;
    return this.frame(k).scalars?.(i - k * this.per);
  }

  /**
   * entriesWith lists, ascending, the entries with a scalar (or, in a text frame, a text) holding `utf8`, searching only
   * the frames that hold entries [from, to): a block of a part, or a stripe its filter named, opens no other frame.
   * Entries outside [from, to) in those frames may be listed too.
   */
  entriesWith(utf8: Uint8Array, from = 0, to = this.n): number[] {
    const out: number[] = [];
    const last = Math.min(this.frames.length, Math.ceil(to / this.per));
    for (let k = Math.floor(from / this.per); k < last; k++) for (const i of this.frame(k).entriesWith(utf8)) out.push(k * this.per + i);
    return out;
  }

  private frame(k: number): ObjectsFrame {
    let frame = this.opened[k];
    if (frame === undefined) {
      const bytes = unpackFrame(this.frames[k]);
      const size = frameSize(this.n, k, this.per);
      if (isShaped(bytes)) frame = new ShapedColumn(bytes, size);
      else {
        const read = textReader(bytes, size);
        frame = { text: read, entriesWith: (utf8) => textEntriesWith(bytes, size, utf8) };
      }
      this.opened[k] = frame;
    }
    return frame;
  }
}

// where a msgpack string of `length` bytes starts (after its header), or -1 when the bytes are not one of that length
function asciiStart(bytes: Uint8Array, length: number): number {
  const head = bytes[0];
  const [at, stored] =
    head === 0xd9
      ? [2, bytes[1]]
      : head === 0xda
        ? [3, (bytes[1] << 8) | bytes[2]]
        : head === 0xdb
          ? [5, ((bytes[1] << 24) | (bytes[2] << 16) | (bytes[3] << 8) | bytes[4]) >>> 0]
          : [-1, -1];
  return stored === length && bytes.length === at + length ? at : -1;
}
