// snappy: the Snappy block format's decoder (as Loki's protobuf push bodies are compressed), in plain TypeScript so
// that it runs alike on Bun and inside the single binary. Every length and offset is checked against the input and
// the declared output, so a hostile body fails fast: it never reads or writes out of bounds, nor loops.

/** SnappyError says why a body is not valid Snappy. */
export class SnappyError extends Error {}

/** snappyUncompress decodes one Snappy block; a declared length over maxLength fails before anything is allocated. */
export function snappyUncompress(src: Uint8Array, maxLength: number): Uint8Array {
  let pos = 0;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (pos >= src.length || shift > 28) throw new SnappyError("the uncompressed length is truncated or too long");
    const c = src[pos++];
    length += (c & 0x7f) * 2 ** shift;
    if (c < 0x80) break;
  }
  if (length > 0xffffffff) throw new SnappyError("the uncompressed length is over 4 GiB");
  if (length > maxLength) throw new SnappyError(`the uncompressed length ${length} is over the limit of ${maxLength} bytes`);
  const out = new Uint8Array(length);
  let o = 0;
  while (pos < src.length) {
    const c = src[pos++];
    const tag = c & 3;
    if (tag === 0) {
      let len = c >>> 2;
      if (len >= 60) {
        const n = len - 59; // 1–4 bytes of length follow
        if (pos + n > src.length) throw new SnappyError("a literal's length is truncated");
        len = 0;
        for (let i = 0; i < n; i++) len += src[pos + i] * 2 ** (8 * i);
        pos += n;
      }
      len += 1;
      if (len > src.length - pos || len > length - o) throw new SnappyError("a literal runs past the input or the output");
      out.set(src.subarray(pos, pos + len), o);
      pos += len;
      o += len;
      continue;
    }
    let len: number;
    let offset: number;
    if (tag === 1) {
      if (pos >= src.length) throw new SnappyError("a copy is truncated");
      len = ((c >>> 2) & 7) + 4;
      offset = ((c >>> 5) << 8) | src[pos++];
    } else if (tag === 2) {
      if (pos + 2 > src.length) throw new SnappyError("a copy is truncated");
      len = (c >>> 2) + 1;
      offset = src[pos] | (src[pos + 1] << 8);
      pos += 2;
    } else {
      if (pos + 4 > src.length) throw new SnappyError("a copy is truncated");
      len = (c >>> 2) + 1;
      offset = (src[pos] | (src[pos + 1] << 8) | (src[pos + 2] << 16)) + src[pos + 3] * 0x1000000;
      pos += 4;
    }
    if (offset === 0 || offset > o || len > length - o) throw new SnappyError("a copy reaches before the start or past the end of the output");
    if (offset >= len) out.copyWithin(o, o - offset, o - offset + len);
    else for (let i = 0; i < len; i++) out[o + i] = out[o - offset + i]; // an overlapping copy repeats what it just wrote
    o += len;
  }
  if (o !== length) throw new SnappyError(`the output is ${o} bytes, not the ${length} declared`);
  return out;
}
