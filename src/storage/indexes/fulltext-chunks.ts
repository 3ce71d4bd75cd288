// fulltext-chunks: how a sealed full-text segment's FlexSearch export is stored. Each chunk is FlexSearch's key and its
// data, a JSON text of words and document numbers, kept zstd-compressed (about a fifth of its size); chunks stored as
// text, as older data directories hold them, read as they are.

/** Chunk is one piece of an export as stored: FlexSearch's key, and its data as text or compressed. */
export type Chunk = [key: string, data: string | Uint8Array];

/** LEVEL is zstd's: an export is made once a segment and read at each load, so a higher level is cheap here. */
const LEVEL = 6;

/** packChunk compresses a chunk's data when that makes it smaller. */
export function packChunk(key: string, data: string): Chunk {
  if (!data.isWellFormed()) return [key, data]; // UTF-8 cannot hold a lone surrogate
  const utf8 = Buffer.from(data);
  const z = Bun.zstdCompressSync(utf8, { level: LEVEL });
  return z.length < utf8.length ? [key, new Uint8Array(z.buffer, z.byteOffset, z.length)] : [key, data];
}

/** chunkText is a stored chunk's data as FlexSearch's import takes it. */
export function chunkText([, data]: Chunk): string {
  return typeof data === "string" ? data : Buffer.from(Bun.zstdDecompressSync(data)).toString("utf8");
}
