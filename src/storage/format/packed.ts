// packed: how block format v6 stores a column of columns.ts: a tag byte, then the column as it is (small ones),
// zstd-compressed whole, or for the text columns zstd-compressed in frames, each frame a column of its own entries.
// zstd needs many similar values side by side; frames keep a read of one entry to one frame.
//   0 PLAIN   the column's bytes
//   1 ZSTD    zstd of the column's bytes
//   2 FRAMED  a msgpack array of zstd frames; frame k holds entries [k·128, (k+1)·128) as a column of its own
//   4 FRAMED_WIDE  the same with frames of FRAME (512) entries (3 is id-column.ts's)
//   5 STEPS   a float64 column of whole numbers (client milliseconds) as the zigzag varint steps from one to the next,
//             then packed whole (tag and bytes): entries a few milliseconds apart take a byte or less each
import { packr } from "./columns.ts";
import { joinText } from "./text-column.ts";
import { VarintReader, varint } from "./varint.ts";

/**
 * FRAME is the entries of one frame of a framed column: a point read decompresses this many, not the block's. It is
 * a filter's stripe (needles.ts), so a rare value's stripe is one frame; frames of 128 took a Loghub-style message
 * column 18% more bytes than 512 (templates seldom repeat within 128 lines).
 */
export const FRAME = 512;
/** NARROW_FRAME is the frame of the columns written before FRAME_WIDE (tag 2). */
const NARROW_FRAME = 128;

// biome-ignore lint/suspicious/noConstEnum: used in this file alone, where Bun inlines its members
const enum Tag {
  Plain,
  Zstd,
  Framed,
  FramedWide = 4,
  Steps,
}

/** SMALL is the size under which a column stays as it is: zstd's frame costs more than it saves. */
const SMALL = 256;
/** LEVEL is zstd's level: 3 costs what 1 does on these columns; 6 saves a tenth more for four times the time. */
const LEVEL = 3;

const tagged = (tag: Tag, bytes: Uint8Array): Uint8Array => {
  const out = new Uint8Array(1 + bytes.length);
  out[0] = tag;
  out.set(bytes, 1);
  return out;
};

/** packPlain stores a column as it is. */
export const packPlain = (bytes: Uint8Array): Uint8Array => tagged(Tag.Plain, bytes);

/** packWhole stores a column compressed whole when that saves space, else as it is. */
export function packWhole(bytes: Uint8Array): Uint8Array {
  if (bytes.length >= SMALL) {
    const z = Bun.zstdCompressSync(bytes, { level: LEVEL });
    if (z.length < bytes.length) return tagged(Tag.Zstd, z);
  }
  return tagged(Tag.Plain, bytes);
}

/** packFramed stores a text column of n entries in frames, `encode(start, end)` making the column of entries [start, end). */
export const packFramed = (n: number, encode: (start: number, end: number) => Uint8Array): Uint8Array =>
  packFramedSmallest(n, (start, end) => [encode(start, end)]);

/**
 * packFramedSmallest is packFramed for a column that has several encodings of a frame: each frame keeps the one that
 * compresses smallest. `encodings` is told the encoding the frame before kept (none for the first), so that it may
 * offer only that one.
 */
export function packFramedSmallest(n: number, encodings: (start: number, end: number, before?: Uint8Array) => readonly Uint8Array[]): Uint8Array {
  if (n <= FRAME) return smallest(encodings(0, n).map(packWhole));
  const frames: Uint8Array[] = [];
  let before: Uint8Array | undefined;
  for (let start = 0; start < n; start += FRAME) {
    const candidates = encodings(start, Math.min(n, start + FRAME), before);
    const packed: Uint8Array[] = candidates.map((bytes) => Bun.zstdCompressSync(bytes, { level: LEVEL }));
    const best = packed.indexOf(smallest(packed));
    before = candidates[best];
    frames.push(packed[best]);
  }
  return tagged(Tag.FramedWide, packr.pack(frames));
}

const smallest = (candidates: readonly Uint8Array[]): Uint8Array => candidates.reduce((best, c) => (c.length < best.length ? c : best));

const body = (bytes: Uint8Array): Uint8Array => bytes.subarray(1);
// a plain view of the fresh Buffer, not a copy: Buffer's slice would be a view where callers expect a copy
const unzstd = (bytes: Uint8Array): Uint8Array => {
  const out = Bun.zstdDecompressSync(bytes);
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
};

/** packNumbers stores a column of float64s (columns.ts encodeFloat64) by its steps when all are whole, else whole. */
export function packNumbers(values: readonly number[]): Uint8Array {
  const steps: number[] = [];
  let last = 0;
  for (const v of values) {
    const step = v - last;
    // -0 and fractions are kept as float64s, and steps whose zigzag form would pass 2^53 and round
    if (!Number.isSafeInteger(v) || Object.is(v, -0) || !(Math.abs(step) <= 2 ** 52)) return packWhole(new Uint8Array(new Float64Array(values).buffer));
    varint(steps, step >= 0 ? 2 * step : -2 * step - 1);
    last = v;
  }
  return tagged(Tag.Steps, packWhole(new Uint8Array(steps)));
}

// the float64s of a column of packNumbers' steps
function unpackSteps(bytes: Uint8Array, n: number): Uint8Array {
  const steps = unpackWhole(body(bytes), n);
  // the array made over a buffer of its own: asking a fresh typed array for its buffer copies it
  const buffer = new ArrayBuffer(8 * n);
  const out = new Float64Array(buffer);
  let last = 0;
  let at = 0;
  let read: VarintReader | undefined;
  for (let i = 0; i < n; i++) {
    const b = steps[at];
    if (b < 0x80) {
      // a step of one byte, most of them: read without a call, in 32-bit arithmetic
      at++;
      last += b & 1 ? -((b + 1) >> 1) : b >> 1;
    } else {
      read ??= new VarintReader(steps, `a column of ${n} client times`);
      read.at = at;
      const zz = read.next();
      at = read.at;
      last += zz % 2 === 0 ? zz / 2 : -(zz + 1) / 2;
    }
    out[i] = last;
  }
  return new Uint8Array(buffer);
}

/**
 * unpackWhole gives a column's bytes as columns.ts encodes them, decompressing or joining its frames (text columns);
 * `frame` turns a frame (or the column stored whole) of n entries into a text column first (numbered-text.ts).
 */
export function unpackWhole(bytes: Uint8Array, n: number, frame: (bytes: Uint8Array, n: number) => Uint8Array = (b) => b): Uint8Array {
  if (bytes[0] === Tag.Plain) return frame(body(bytes), n);
  if (bytes[0] === Tag.Zstd) return frame(unzstd(body(bytes)), n);
  if (bytes[0] === Tag.Steps) return unpackSteps(bytes, n);
  const frames = framesOf(bytes);
  const per = frameOf(bytes);
  const sizes = frames.map((_, k) => frameSize(n, k, per));
  return joinText(
    frames.map((f, k) => frame(unzstd(f), sizes[k])),
    sizes,
  );
}

/** isFramed tells whether a packed column is stored in frames. */
export const isFramed = (bytes: Uint8Array): boolean => bytes[0] === Tag.Framed || bytes[0] === Tag.FramedWide;

/** frameOf is the entries of each frame of a framed column. */
export const frameOf = (bytes: Uint8Array): number => (bytes[0] === Tag.Framed ? NARROW_FRAME : FRAME);

/** framesOf lists a framed column's compressed frames. */
export const framesOf = (bytes: Uint8Array): Uint8Array[] => packr.unpack(body(bytes)) as Uint8Array[];

/** unpackFrame decompresses one frame of a framed column. */
export const unpackFrame = unzstd;

/** frameSize is the number of entries of frame k of a column of n entries in frames of `per`. */
export const frameSize = (n: number, k: number, per: number): number => Math.min(per, n - k * per);
