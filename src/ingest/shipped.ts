// shipped: a standard shipper's request (contract §11) → the entries that pass the one rule set, encoded for storage,
// and the rejected ones with their reasons. No I/O and no shared state: it runs on the ingest worker for large bodies.
import type { Plan } from "../limits/plans.ts";
import { BLOCK_MAX } from "../storage/format/block.ts";
import { encodeEntries, type EncodedBlock } from "../storage/format/encode.ts";
import { decodeEs } from "./protocols/es.ts";
import type { Item } from "./protocols/item.ts";
import { decodeLoki } from "./protocols/loki.ts";
import { decodeOtlp } from "./protocols/otlp.ts";
import { checkEntry, type EntryBound, type NewEntry, UNBOUNDED } from "./rules.ts";

export type Protocol = "otlp" | "loki" | "es" | "syslog";
export const PROTOCOLS: readonly Protocol[] = ["otlp", "loki", "es", "syslog"];

/** ShippedBody is a protocol request's decoded body and what its route knows of it. */
export interface ShippedBody {
  protocol: Exclude<Protocol, "syslog">;
  bytes: Uint8Array;
  /** JSON rather than protobuf (OTLP, Loki) */
  json: boolean;
  /** the Loki body is snappy-compressed protobuf */
  snappy?: boolean;
  /** Elasticsearch: the index of the path */
  index?: string;
  /** the largest body the plan takes, which bounds what snappy may inflate to */
  limit: number;
  /** the receipt time, the timestamp of entries that carry none */
  receivedMs: number;
}

/** Rejection is one received entry that was not stored, and why. */
export interface Rejection {
  /** its position among the request's entries */
  index: number;
  field: string;
  reason: string;
  /** the entry as received, cut to 1,000 characters */
  sample: string;
}

/** ShippedBatch is a request's outcome before ids are drawn: the encoded entries that pass, in order, and the others. */
export interface ShippedBatch {
  /** entries received */
  total: number;
  /** entries to store */
  count: number;
  blocks: EncodedBlock[];
  rejected: Rejection[];
  /** Elasticsearch: each item's action and index, in order */
  ops?: { op: string; index: string }[];
}

/** prepareShipped decodes a protocol body (a 400 when it cannot be decoded at all), checks each entry and encodes those that pass. */
export function prepareShipped(body: ShippedBody, plan: Plan, splitWords = false): ShippedBatch {
  const items = decode(body);
  // protobuf strings are decoded from UTF-8 (asBuffer), so none holds a lone surrogate: the rule need not look
  const batch = checkItems(items, plan, body.json ? UNBOUNDED : { ...UNBOUNDED, surrogates: false }, splitWords);
  if (body.protocol === "es") batch.ops = items.map((i) => ({ op: i.op ?? "create", index: i.index ?? "" }));
  return batch;
}

/** checkItems runs the entry rules on decoded items; the syslog listener calls it directly for its lines. */
export function checkItems(items: Item[], plan: Plan, bound: EntryBound = UNBOUNDED, splitWords = false): ShippedBatch {
  const entries: NewEntry[] = [];
  const rejected: Rejection[] = [];
  items.forEach((item, index) => {
    if (!item.entry) {
      rejected.push({ index, field: item.problem?.field ?? "", reason: item.problem?.message ?? "the entry could not be read", sample: item.sample() });
      return;
    }
    const check = checkEntry(item.entry, index, plan, item.bound ? { ...item.bound, surrogates: bound.surrogates } : bound);
    if (check.entry) entries.push(check.entry);
    else {
      const first = check.errors[0];
      rejected.push({ index, field: first.field, reason: check.errors.map((e) => `${e.field || "entry"}: ${e.message}`).join("; "), sample: item.sample() });
    }
  });
  const blocks: EncodedBlock[] = [];
  for (let i = 0; i < entries.length; i += BLOCK_MAX)
    blocks.push(encodeEntries(entries.length <= BLOCK_MAX ? entries : entries.slice(i, i + BLOCK_MAX), splitWords));
  return { total: items.length, count: entries.length, blocks, rejected };
}

function decode(body: ShippedBody): Item[] {
  switch (body.protocol) {
    case "otlp":
      return decodeOtlp(body.bytes, body.json, body.receivedMs);
    case "loki":
      return decodeLoki(body.bytes, body.json, body.snappy ?? false, body.receivedMs, body.limit);
    case "es":
      return decodeEs(body.bytes, body.index, body.receivedMs);
  }
}
