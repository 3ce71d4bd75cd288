// message: a write as it travels through a partition's stream, from the front that accepted it to every copy.
// A write is packed once by its front, compressed (zstd, level 1: a quarter of the bytes for log entries), and
// unpacked by every copy; JetStream stores, replicates and delivers each byte several times, so fewer bytes cost
// less CPU on this machine's NATS servers and in every node's NATS client than the compression costs. A prepared
// write's columns and filters travel beside the compressed part, not in it: they are zstd frames or random bits.
import { Packr } from "msgpackr";
import type { Protocol, Rejection } from "../ingest/shipped.ts";
import type { Environment } from "../schema.ts";
import type { Entry } from "../storage/format/block.ts";
import type { EncodedBlock } from "../storage/format/encode.ts";

/**
 * WriteMessage is one accepted write: its tenant, server millisecond and monthly limit, and its entries or encoded
 * blocks; or the entries a shipper request had rejected, which the copies list (GET /ingest/rejections).
 */
export interface WriteMessage {
  ws: string;
  env: Environment;
  ms: number;
  limit: number;
  entries?: Entry[];
  prepared?: { ids: string[]; blocks: EncodedBlock[] };
  rejected?: { protocol: Protocol; items: readonly Rejection[] };
}

/**
 * Verdict of a write as a copy announces it: the stream sequence it applied, stored or refused by the quota, and the
 * month's count; with `after`, its first key (server millisecond, id) was not above the key of the tenant's last
 * write (`after`), which a write from another front took first: it was stored re-keyed just above (IdGenerator.above).
 */
export interface VerdictMessage {
  seq: number;
  stored: boolean;
  used: number;
  after?: { ms: number; id: string };
}

const packr = new Packr({ moreTypes: true, useRecords: false });

/** the first byte of a write: never the first byte of a msgpack value, so writes packed before it (no such byte) still read */
const ZSTD = 0xc1;
/** writes smaller than this packed are sent as they are: compressing a single entry saves little and costs a call */
const COMPRESS_FROM = 2048;
const PLAIN = 0xc2;
/**
 * the first byte of a prepared write sent in two parts: a byte saying whether the first is compressed, its length
 * (uint32), then the write but its blocks' columns and filters, then those packed as they are. A node of a version
 * before reads it as a msgpack `true` followed by more bytes, which msgpackr refuses: it stops at this write.
 */
const SPLIT = 0xc3;
/** packs byte arrays as msgpack bin, which unpack as views of the bytes read rather than a copy each */
const binPackr = new Packr({ useRecords: false });
/** every id is a canonical UUID: the ids of a write travel as one string, far faster to pack and unpack than a thousand */
const ID_CHARS = 36;

interface Packed extends Omit<WriteMessage, "entries" | "prepared"> {
  /** entries as JSON text: msgpackr renames a `__proto__` key when it unpacks, and JSON.parse keeps it */
  entriesJson?: string;
  /** the prepared blocks, and their ids joined when each is a UUID */
  blocks?: SentBlock[];
  ids?: string | string[];
}

/**
 * SentBlock is a prepared block as a ZSTD or PLAIN write carried it: its filters as `stripeFilters`, or as `filters`
 * before filters could have three times a power of two regions (needles.ts). A block with neither is refused.
 * Prepared writes are sent as SPLIT now.
 */
type SentBlock = Omit<EncodedBlock, "filters"> & { stripeFilters?: Uint32Array[]; filters?: Uint32Array[] };

function received({ stripeFilters, filters, ...rest }: SentBlock): EncodedBlock {
  const found = stripeFilters ?? filters;
  if (!found) throw new Error("a write's block carries no filters: the stream holds a write this version cannot index; upgrade every node to one version");
  return { ...rest, filters: found };
}

/** encodeWrite packs and compresses a write message: a prepared one as SPLIT, any other whole (ZSTD or PLAIN). */
export function encodeWrite(m: WriteMessage): Uint8Array {
  const { entries, prepared, ...rest } = m;
  if (prepared) return encodeSplit(rest, prepared);
  const packed: Packed = { ...rest };
  if (entries) packed.entriesJson = JSON.stringify(entries);
  const bytes = packr.pack(packed);
  const body = bytes.byteLength >= COMPRESS_FROM ? Bun.zstdCompressSync(bytes, { level: 1 }) : bytes;
  const out = new Uint8Array(body.byteLength + 1);
  out[0] = body === bytes ? PLAIN : ZSTD;
  out.set(body, 1);
  return out;
}

/** SplitHead is the compressed part of a SPLIT write: all of it but its blocks' columns and filters. */
interface SplitHead extends Omit<WriteMessage, "entries" | "prepared"> {
  ids: string | string[];
  blocks: Omit<EncodedBlock, "columns" | "filters">[];
}

const joinedIds = (ids: string[]): string | string[] => (ids.every((id) => id.length === ID_CHARS) ? ids.join("") : ids);
const bytesOf = (a: Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** encodeSplit packs a prepared write as SPLIT says: its blocks' columns and filters apart from the compressed rest. */
function encodeSplit(rest: Omit<WriteMessage, "entries" | "prepared">, { ids, blocks }: NonNullable<WriteMessage["prepared"]>): Uint8Array {
  const small = blocks.map(({ columns: _c, filters: _f, ...others }) => others);
  const packed = binPackr.pack({ ...rest, ids: joinedIds(ids), blocks: small } satisfies SplitHead);
  const zipped = packed.byteLength >= COMPRESS_FROM;
  const head = zipped ? Bun.zstdCompressSync(packed, { level: 1 }) : packed;
  const tail = binPackr.pack(blocks.map((b) => [b.columns, b.filters.map(bytesOf)]));
  const out = new Uint8Array(6 + head.byteLength + tail.byteLength);
  out[0] = SPLIT;
  out[1] = zipped ? 1 : 0;
  new DataView(out.buffer).setUint32(2, head.byteLength);
  out.set(head, 6);
  out.set(tail, 6 + head.byteLength);
  return out;
}

/** copyOf copies bytes: a Buffer's own slice() is a view */
const copyOf = (bytes: Uint8Array): Uint8Array => Uint8Array.prototype.slice.call(bytes);
/** plain views bytes as a Uint8Array, whose slice() copies as the storage code expects, where msgpackr gives a Buffer */
const plain = (bytes: Uint8Array): Uint8Array => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * decodeSplit reads what encodeSplit packed. The bytes are copied once, not viewed: the NATS client's buffer is its
 * own. Each filter gets a buffer of its own, as the needle index holds filters long after the write.
 */
function decodeSplit(data: Uint8Array): WriteMessage {
  const length = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(2);
  const head = data.subarray(6, 6 + length);
  const p = binPackr.unpack(data[1] === 1 ? Bun.zstdDecompressSync(head) : copyOf(head)) as SplitHead;
  const parts = binPackr.unpack(copyOf(data.subarray(6 + length))) as [EncodedBlock["columns"], Uint8Array[]][];
  if (parts.length !== p.blocks.length) throw new Error("a write's blocks and their columns do not match: the message is damaged");
  const blocks = p.blocks.map((small, i): EncodedBlock => {
    const [columns, filters] = parts[i];
    return {
      ...small,
      terms: small.terms.map(([kind, term, positions]) => [kind, term, plain(positions)]),
      columns: columns.map((c) => c && plain(c)) as EncodedBlock["columns"],
      filters: filters.map((f) => new Uint32Array(copyOf(f).buffer)),
    };
  });
  return { ws: p.ws, env: p.env, ms: p.ms, limit: p.limit, prepared: { ids: typeof p.ids === "string" ? splitIds(p.ids) : p.ids, blocks } };
}

/** decodeWrite unpacks what encodeWrite packed, and writes packed before the compression (a plain msgpack map). */
export function decodeWrite(data: Uint8Array): WriteMessage {
  if (data[0] === SPLIT) return decodeSplit(data);
  if (data[0] !== ZSTD && data[0] !== PLAIN) return decodeUnframed(data);
  const body = data.subarray(1);
  const p = packr.unpack(data[0] === ZSTD ? Bun.zstdDecompressSync(body) : body) as Packed;
  const m: WriteMessage = { ws: p.ws, env: p.env, ms: p.ms, limit: p.limit };
  if (p.entriesJson !== undefined) m.entries = JSON.parse(p.entriesJson) as Entry[];
  if (p.ids !== undefined && p.blocks !== undefined) m.prepared = { ids: typeof p.ids === "string" ? splitIds(p.ids) : p.ids, blocks: p.blocks.map(received) };
  if (p.rejected !== undefined) m.rejected = p.rejected;
  return m;
}

function splitIds(joined: string): string[] {
  const ids = new Array<string>(joined.length / ID_CHARS);
  for (let i = 0; i < ids.length; i++) ids[i] = joined.slice(i * ID_CHARS, (i + 1) * ID_CHARS);
  return ids;
}

/** decodeUnframed reads a write as fronts packed it before the first byte said how (entries as JSON text, ids an array). */
function decodeUnframed(data: Uint8Array): WriteMessage {
  const m = packr.unpack(data) as WriteMessage & { entriesJson?: string };
  if (m.entriesJson !== undefined) m.entries = JSON.parse(m.entriesJson) as Entry[];
  delete m.entriesJson;
  return m;
}

/** pack and unpack carry the cluster's other messages (verdicts, forwarded reads). */
export const pack = (value: unknown): Uint8Array => packr.pack(value);
export const unpack = <T>(data: Uint8Array): T => packr.unpack(data) as T;
