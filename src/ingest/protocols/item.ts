// item: what every protocol decoder yields, one per entry received: the CreateLogRequest it maps to (checked by the
// one rule set afterwards), or the reason the decoder could not map it, and how to show the entry as received.
import { formatMs } from "../../time.ts";

/** Item is one received entry of a protocol's request. */
export interface Item {
  /** the entry it maps to, a CreateLogRequest; undefined when the decoder refused it (then `problem` says why) */
  entry?: Record<string, unknown>;
  problem?: { field: string; message: string };
  /** what the decoder measured of the entry as it built it: a bound on its JSON size and its nesting (checkEntry's bound) */
  bound?: { size: number; nesting: number };
  /** the entry as received, for the rejection list; called only for rejected items */
  sample(): string;
  /** Elasticsearch: the bulk action and the index it named */
  op?: string;
  index?: string;
}

/** SAMPLE_CHARS is how much of a rejected entry the rejection list keeps (contract §11). */
export const SAMPLE_CHARS = 1000;

/** sampleOf renders a received value as JSON text, cut to SAMPLE_CHARS; bigints and bytes as text. */
export function sampleOf(value: unknown): string {
  try {
    const text =
      typeof value === "string"
        ? value
        : JSON.stringify(value, (_k, v) => (typeof v === "bigint" ? v.toString() : v instanceof Uint8Array ? Buffer.from(v).toString("hex") : v));
    return (text ?? String(value)).slice(0, SAMPLE_CHARS);
  } catch {
    return String(value).slice(0, SAMPLE_CHARS);
  }
}

/**
 * timestampOf renders epoch ms as the RFC 3339 text of a clientTimestamp; a number outside what a Date holds gives
 * text the entry rules refuse (reported on field clientTimestamp) rather than a throw.
 */
export function timestampOf(ms: number): string {
  if (!Number.isFinite(ms) || Math.abs(ms) > 8.64e15) return String(ms);
  return formatMs(Math.floor(ms));
}

/** DEPTH_MAX bounds how deeply a decoder follows nested values; deeper ones fail the entry, never the stack. */
export const DEPTH_MAX = 64;

/** TooDeep is thrown by a decoder's value conversion past DEPTH_MAX and caught per entry. */
export class TooDeep extends Error {
  constructor() {
    super(`a value nests deeper than ${DEPTH_MAX} levels; flatten it`);
  }
}

/** int64Of reads an int64 as protobufjs gives it (a Long, or a number) or as JSON text; NaN when it is none. */
export function int64Of(v: unknown): number {
  if (typeof v === "number") return v;
  if (typeof v === "object" && v !== null && typeof (v as { toNumber?: unknown }).toNumber === "function") return (v as { toNumber(): number }).toNumber();
  return typeof v === "string" && /^-?\d+$/.test(v) ? Number(v) : Number.NaN;
}

/**
 * asBuffer views bytes as a Buffer, without a copy: protobufjs then decodes strings with Buffer's UTF-8 decoder, which
 * turns invalid sequences into U+FFFD, so no decoded string holds a lone surrogate (its own decoder can make one).
 */
export const asBuffer = (bytes: Uint8Array): Buffer => (Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
