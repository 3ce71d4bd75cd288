// text-column: a column of texts or nulls (message, objects), each decodable alone: a uint32 of flags, the uint32 end
// offsets in bytes (bit 31: null), unless all is ASCII the end offsets in characters, then the UTF-8 bytes (all
// little-endian). compactText is its form on disk, the end offsets as varint lengths.
import { copyOf, type Reader } from "./columns.ts";
import { VarintReader, varint } from "./varint.ts";

/** NULL_BIT marks an end offset whose entry is null. */
export const NULL_BIT = 0x80000000;
/** WIDE is a text column's flag: not all ASCII, so character offsets follow the byte offsets. */
export const WIDE = 1;
const encoder = new TextEncoder();

/** encodeText packs strings or nulls so that each decodes alone, and all of them in one go. */
export function encodeText(values: readonly (string | null)[]): Uint8Array {
  const n = values.length;
  const joined = values.join(""); // join writes null as ""
  const size = Buffer.byteLength(joined);
  const ascii = size === joined.length; // then byte offsets are character offsets too
  if (!ascii) return encodeWideText(values);
  if (size >= NULL_BIT) throw new Error(`BUG: a block's text column of ${size} bytes passes 2 GiB`);
  const out = new Uint8Array(4 * (1 + n) + size);
  const ends = new Uint32Array(out.buffer, 4, n);
  let at = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null) at += v.length;
    ends[i] = v === null ? at + NULL_BIT : at;
  }
  encoder.encodeInto(joined, out.subarray(4 * (1 + n)));
  return out;
}

// each string is encoded alone: joined, a lone surrogate at the end of one could pair with the next
function encodeWideText(values: readonly (string | null)[]): Uint8Array {
  const n = values.length;
  let size = 0;
  for (const v of values) if (v !== null) size += Buffer.byteLength(v);
  if (size >= NULL_BIT) throw new Error(`BUG: a block's text column of ${size} bytes passes 2 GiB`);
  const out = new Uint8Array(4 * (1 + 2 * n) + size);
  const head = new Uint32Array(out.buffer, 0, 1 + 2 * n);
  head[0] = WIDE;
  const payload = out.subarray(head.byteLength);
  let at = 0;
  let chars = 0;
  for (let i = 0; i < n; i++) {
    const v = values[i];
    if (v !== null) {
      at += encoder.encodeInto(v, payload.subarray(at)).written;
      chars += v.length; // a lone surrogate decodes as U+FFFD: one character still
    }
    head[1 + i] = v === null ? at + NULL_BIT : at;
    head[1 + n + i] = chars;
  }
  return out;
}

/** joinText makes one column of encodeText from columns of consecutive entries (`sizes[k]` entries in `parts[k]`). */
export function joinText(parts: readonly Uint8Array[], sizes: readonly number[]): Uint8Array {
  const n = sizes.reduce((a, b) => a + b, 0);
  const wide = parts.some((p) => (p[0] & WIDE) !== 0);
  const payloads = parts.map((p, k) => textPayload(p, sizes[k]));
  const size = payloads.reduce((a, p) => a + p.length, 0);
  if (size >= NULL_BIT) throw new Error(`BUG: a block's text column of ${size} bytes passes 2 GiB`);
  const out = new Uint8Array(4 * (1 + (wide ? 2 : 1) * n) + size);
  const head = new Uint32Array(out.buffer, 0, wide ? 1 + 2 * n : 1 + n);
  head[0] = wide ? WIDE : 0;
  let at = 0; // entries so far
  let bytesAt = 0;
  let charsAt = 0;
  let payloadAt = head.byteLength;
  for (const [k, part] of parts.entries()) {
    const m = sizes[k];
    const partHead = new Uint32Array(copyOf(part, 0, textHeadBytes(part, m)));
    const partWide = (partHead[0] & WIDE) !== 0;
    for (let i = 0; i < m; i++) {
      const end = partHead[1 + i];
      head[1 + at + i] = (end % NULL_BIT) + bytesAt + (end >= NULL_BIT ? NULL_BIT : 0);
      if (wide) head[1 + n + at + i] = (partWide ? partHead[1 + m + i] : end % NULL_BIT) + charsAt;
    }
    out.set(payloads[k], payloadAt);
    payloadAt += payloads[k].length;
    bytesAt += payloads[k].length;
    charsAt = wide ? head[n + at + m] : bytesAt;
    at += m;
  }
  return out;
}

/** textReader reads a column of encodeText, decoding an entry's string when first asked for it. */
export function textReader(bytes: Uint8Array, n: number): Reader<string | null> {
  const wide = (bytes[0] & WIDE) !== 0;
  const head = new Uint32Array(copyOf(bytes, 0, textHeadBytes(bytes, n)));
  const ends = head.subarray(1, 1 + n); // byte offsets; bit 31 marks a null
  const charEnds = wide ? head.subarray(1 + n) : ends;
  const text = textPayload(bytes, n);
  const values: (string | null | undefined)[] = new Array(n);
  let decoded = 0;
  const decodeWhole = () => {
    const whole = text.toString("utf8");
    for (let i = 0; i < n; i++) values[i] ??= ends[i] >= NULL_BIT ? null : whole.slice(i === 0 ? 0 : charEnds[i - 1] % NULL_BIT, charEnds[i] % NULL_BIT);
  };
  return (i) => {
    let v = values[i];
    if (v === undefined) {
      if (++decoded === WHOLE_AFTER) decodeWhole();
      v = values[i] ??= ends[i] >= NULL_BIT ? null : text.toString("utf8", i === 0 ? 0 : ends[i - 1] % NULL_BIT, ends[i]);
    }
    return v;
  };
}

/** COMPACT starts a compact text column (compactText); a text column starts with its flags, 0 or 1. */
const COMPACT = 0x43;

/**
 * compactText stores a text column of n entries for the disk: COMPACT, its flags, each entry's byte length times two
 * plus one when it is null, then (not all ASCII) each entry's character length, all varints, then its bytes. The
 * end offsets it replaces are four bytes an entry that zstd keeps at about two and a half.
 */
export function compactText(bytes: Uint8Array, n: number): Uint8Array {
  const head = new Uint32Array(copyOf(bytes, 0, textHeadBytes(bytes, n)));
  const wide = (head[0] & WIDE) !== 0;
  const lengths: number[] = [COMPACT, head[0]];
  let last = 0;
  for (let i = 1; i <= n; i++) {
    const end = head[i] % NULL_BIT;
    varint(lengths, 2 * (end - last) + (head[i] >= NULL_BIT ? 1 : 0));
    last = end;
  }
  for (let i = 1, chars = 0; wide && i <= n; i++) {
    varint(lengths, head[n + i] - chars);
    chars = head[n + i];
  }
  const payload = textPayload(bytes, n);
  const out = new Uint8Array(lengths.length + payload.length);
  out.set(lengths);
  out.set(payload, lengths.length);
  return out;
}

/** isCompactText tells whether a column's bytes are compactText's. */
export const isCompactText = (bytes: Uint8Array): boolean => bytes[0] === COMPACT;

/** expandText gives back the text column of n entries that compactText stored. */
export function expandText(bytes: Uint8Array, n: number): Uint8Array {
  const flags = bytes[1];
  if (flags !== 0 && flags !== WIDE)
    throw new Error("a compact text column's flags are neither 0 nor 1: the data directory is damaged; restore it from a backup");
  const wide = flags === WIDE;
  const head = new Uint32Array(1 + (wide ? 2 : 1) * n);
  head[0] = flags;
  const read = new VarintReader(bytes.subarray(2), `a compact text column's ${n} lengths`);
  let end = 0;
  for (let i = 1; i <= n; i++) {
    const v = read.next();
    end += Math.floor(v / 2);
    if (end >= NULL_BIT) throw new Error("a compact text column's lengths pass 2 GiB: the data directory is damaged; restore it from a backup");
    head[i] = v % 2 === 1 ? end + NULL_BIT : end;
  }
  for (let i = 1, chars = 0; wide && i <= n; i++) head[n + i] = chars += read.next();
  const payload = bytes.subarray(2 + read.at);
  if (payload.length !== end)
    throw new Error("a compact text column's lengths do not add up to its bytes: the data directory is damaged; restore it from a backup");
  const out = new Uint8Array(head.byteLength + payload.length);
  out.set(new Uint8Array(head.buffer), 0);
  out.set(payload, head.byteLength);
  return out;
}

/** textHeadBytes is a text column's head: the flags, the byte end offsets and, when not all ASCII, the character end offsets. */
export const textHeadBytes = (bytes: Uint8Array, n: number): number => 4 * (1 + ((bytes[0] & WIDE) !== 0 ? 2 : 1) * n);

/** textPayload is a text column's UTF-8 bytes after the head, viewed where they are. */
export function textPayload(bytes: Uint8Array, n: number): Buffer {
  const head = textHeadBytes(bytes, n);
  return Buffer.from(bytes.buffer, bytes.byteOffset + head, bytes.length - head);
}

// a read that wants many entries of a block (a scan) is served faster by one decode of the whole text
const WHOLE_AFTER = 64;
