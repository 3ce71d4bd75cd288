// message: a write as it travels through a partition's stream, from the front that accepted it to every copy.
import { Packr } from "msgpackr";
import type { Protocol, Rejection } from "../ingest/shipped.ts";
import type { Environment } from "../schema.ts";
import type { Entry } from "../storage/block.ts";
import type { EncodedBlock } from "../storage/encode.ts";

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
 * month's count; or, with `after`, refused because its first key (server millisecond, id) is not above the key of
 * the tenant's last write (`after`), which a write from another front took first: the front sends it again above.
 */
export interface VerdictMessage {
  seq: number;
  stored: boolean;
  used: number;
  after?: { ms: number; id: string };
}

const packr = new Packr({ moreTypes: true, useRecords: false });

/**
 * encodeWrite packs a write message (typed arrays kept as such). Entries travel as JSON text: msgpackr renames a
 * `__proto__` key when it unpacks, and an entry's objects must come back exactly as sent (JSON.parse keeps it).
 */
export const encodeWrite = (m: WriteMessage): Uint8Array => packr.pack(m.entries ? { ...m, entries: undefined, entriesJson: JSON.stringify(m.entries) } : m);
/** decodeWrite unpacks what encodeWrite packed. */
export function decodeWrite(data: Uint8Array): WriteMessage {
  const m = packr.unpack(data) as WriteMessage & { entriesJson?: string };
  if (m.entriesJson !== undefined) m.entries = JSON.parse(m.entriesJson) as Entry[];
  delete m.entriesJson;
  return m;
}
/** pack and unpack carry the cluster's other messages (verdicts, forwarded reads). */
export const pack = (value: unknown): Uint8Array => packr.pack(value);
export const unpack = <T>(data: Uint8Array): T => packr.unpack(data) as T;
