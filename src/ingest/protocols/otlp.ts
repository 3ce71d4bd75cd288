// otlp: OpenTelemetry OTLP/HTTP log export requests (protobuf or JSON) → entries, by the mapping of contract §11.
import { badRequest } from "../../errors.ts";
import { asBuffer, DEPTH_MAX, type Item, sampleOf, TooDeep, timestampOf } from "./item.ts";
import { parseBoundedJson } from "./json.ts";
import { levelOfName, levelOfOtel } from "./levels.ts";
import { define, setPath } from "./nest.ts";
import { ExportLogsServiceRequest, ExportLogsServiceResponse } from "./schemas.ts";

/** Shapes common to the protobuf messages (protobufjs, camelCase) and OTLP/JSON. */
interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: unknown;
  doubleValue?: unknown;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
  bytesValue?: unknown;
}
interface KeyValue {
  key?: string;
  value?: AnyValue;
}
interface LogRecord {
  timeUnixNano?: unknown;
  observedTimeUnixNano?: unknown;
  severityNumber?: unknown;
  severityText?: string;
  body?: AnyValue;
  attributes?: KeyValue[];
  traceId?: unknown;
  spanId?: unknown;
  eventName?: string;
}
interface ScopeLogs {
  scope?: { name?: string; version?: string };
  logRecords?: LogRecord[];
}
interface ResourceLogs {
  resource?: { attributes?: KeyValue[] };
  scopeLogs?: ScopeLogs[];
}

/** decodeOtlp reads an ExportLogsServiceRequest; a body that is not one answers 400. */
export function decodeOtlp(bytes: Uint8Array, json: boolean, receivedMs: number): Item[] {
  let request: { resourceLogs?: ResourceLogs[] };
  if (json) request = parseBoundedJson(bytes) as typeof request;
  else {
    try {
      request = ExportLogsServiceRequest.decode(asBuffer(bytes)) as typeof request;
    } catch (e) {
      throw badRequest("VALIDATION_INVALID_REQUEST", `the body is not an OTLP ExportLogsServiceRequest in protobuf (${(e as Error).message})`);
    }
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw badRequest("VALIDATION_INVALID_REQUEST", "the body is not an OTLP ExportLogsServiceRequest: send an object with resourceLogs");
  }
  const items: Item[] = [];
  for (const rl of list<ResourceLogs>(request.resourceLogs)) {
    const measured = new Measure();
    const resource = attributesOf(rl?.resource?.attributes, measured);
    for (const sl of list<ScopeLogs>(rl?.scopeLogs)) {
      const scopeName = text(sl?.scope?.name);
      const scopeVersion = text(sl?.scope?.version);
      // one context object for the scope's records that add no trace: entries are only read once mapped
      let shared: Record<string, unknown> | TooDeep = resource;
      const context = measured.copy();
      if (!(resource instanceof TooDeep) && (scopeName || scopeVersion)) {
        shared = { ...resource };
        define(shared, "scope", { name: scopeName, version: scopeVersion });
        context.size += 6 * (scopeName.length + scopeVersion.length) + 40;
        context.depth = Math.max(context.depth, 2);
      }
      for (const record of list<LogRecord>(sl?.logRecords)) items.push(mapRecord(record, shared, context, scopeName, receivedMs));
    }
  }
  return items;
}

/**
 * Measure bounds what a mapped entry's JSON holds as it is built: its size (each character of a string or key
 * counted 6 times, as \u escapes may cost, numbers 25) and its nesting (dotted keys included), so the entry rules
 * need not stringify or walk an entry that is well within the plan (checkEntry's bound).
 */
class Measure {
  size = 0;
  /** the deepest object or array, the entry's field itself being 1 */
  depth = 1;

  copy(): Measure {
    const m = new Measure();
    m.size = this.size;
    m.depth = this.depth;
    return m;
  }
}

/** ENTRY_OVERHEAD bounds the JSON of an entry's field names, level, timestamp and nulls. */
const ENTRY_OVERHEAD = 200;

/** encodeOtlpResponse is the ExportLogsServiceResponse, with partialSuccess when entries were rejected. */
export function encodeOtlpResponse(rejected: number, errorMessage: string, json: boolean): Uint8Array | string {
  const body = rejected > 0 ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {};
  if (json) return JSON.stringify(body);
  return ExportLogsServiceResponse.encode(ExportLogsServiceResponse.fromObject(body)).finish();
}

function mapRecord(record: LogRecord, shared: Record<string, unknown> | TooDeep, sharedMeasure: Measure, scopeName: string, receivedMs: number): Item {
  const sample = () => sampleOf(record);
  if (typeof record !== "object" || record === null) return { problem: { field: "", message: "a log record must be an object" }, sample };
  try {
    if (shared instanceof TooDeep) throw shared;
    const m = new Measure();
    const attributes = attributesOf(record.attributes, m);
    if (attributes instanceof TooDeep) throw attributes;
    const event = attributes.event as Record<string, unknown> | undefined;
    const eventAttr = typeof event === "object" && event !== null ? event.name : undefined;
    const action = text(record.eventName) || (typeof eventAttr === "string" ? eventAttr.trim() : "") || scopeName || "log";
    const severity = numberOf(record.severityNumber);
    const level = (severity !== 0 ? levelOfOtel(severity) : undefined) ?? levelOfName(record.severityText) ?? "info";
    let message: string | null = null;
    const metadata: Record<string, unknown> = attributes;
    if (record.body) {
      const body = anyValue(record.body, 2, m); // as metadata.body, were it an object
      if (typeof body === "string") message = body;
      else if (typeof body === "object" && body !== null) define(metadata, "body", body);
      else if (body !== undefined && body !== null) message = String(body);
      m.size += 40;
    }
    const time = nanosToMs(record.timeUnixNano) || nanosToMs(record.observedTimeUnixNano) || receivedMs;
    let context = shared;
    const traceId = hexOf(record.traceId);
    const spanId = hexOf(record.spanId);
    if (traceId || spanId) {
      context = { ...shared };
      if (traceId) define(context, "trace_id", traceId);
      if (spanId) define(context, "span_id", spanId);
      m.size += 6 * (traceId.length + spanId.length) + 40;
    }
    const size = ENTRY_OVERHEAD + m.size + sharedMeasure.size + 6 * (action.length + (message?.length ?? 0));
    return {
      entry: {
        action,
        level,
        message,
        clientTimestamp: timestampOf(time),
        context: isEmpty(context) ? null : context,
        metadata: isEmpty(metadata) ? null : metadata,
      },
      bound: { size, nesting: Math.max(m.depth, sharedMeasure.depth) },
      sample,
    };
  } catch (e) {
    if (e instanceof TooDeep) return { problem: { field: "metadata", message: e.message }, sample };
    throw e;
  }
}

function isEmpty(o: Record<string, unknown>): boolean {
  for (const _ in o) return false;
  return true;
}

const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const text = (v: unknown): string => (typeof v === "string" ? v.trim() : "");

/** attributesOf turns a KeyValue list into an object, dotted keys nested; a value nested too deeply yields TooDeep. */
function attributesOf(kvs: unknown, m: Measure): Record<string, unknown> | TooDeep {
  try {
    return kvlistOf(kvs, 1, m);
  } catch (e) {
    if (e instanceof TooDeep) return e;
    throw e;
  }
}

/** kvlistOf turns a KeyValue list into an object, the keys without dots first and then the dotted ones nested (nest.ts). */
function kvlistOf(kvs: unknown, depth: number, m: Measure): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const all = list<KeyValue>(kvs);
  if (depth > m.depth) m.depth = depth;
  m.size += 2;
  let dotted = false;
  for (const kv of all) {
    if (typeof kv !== "object" || kv === null || typeof kv.key !== "string") continue;
    if (kv.key.includes(".")) {
      dotted = true;
      continue;
    }
    m.size += 6 * kv.key.length + 8;
    define(out, kv.key, kv.value ? anyValue(kv.value, depth + 1, m) : null);
  }
  if (dotted) {
    for (const kv of all) {
      if (typeof kv !== "object" || kv === null || typeof kv.key !== "string" || !kv.key.includes(".")) continue;
      // each dot may open an object: its braces, quotes and colon cost less than the 6 the dot is counted
      const dots = kv.key.split(".").length - 1;
      if (depth + dots > m.depth) m.depth = depth + dots;
      m.size += 6 * kv.key.length + 8;
      setPath(out, kv.key, kv.value ? anyValue(kv.value, depth + 1 + dots, m) : null);
    }
  }
  return out;
}

/** anyValue converts an AnyValue to JSON: int64s as numbers while exact (else text), bytes as base64. */
function anyValue(v: AnyValue, depth: number, m: Measure): unknown {
  if (depth > DEPTH_MAX) throw new TooDeep();
  const scalar = scalarOf(v);
  if (scalar !== NOT_SCALAR) {
    m.size += typeof scalar === "string" ? 6 * scalar.length + 3 : 25;
    return scalar;
  }
  if (depth > m.depth) m.depth = depth;
  if (Object.hasOwn(v, "arrayValue")) {
    const values = list<AnyValue>(v.arrayValue?.values);
    m.size += 2 + values.length;
    return values.map((x) => anyValue(x, depth + 1, m));
  }
  return kvlistOf(v.kvlistValue?.values, depth, m);
}

const NOT_SCALAR = Symbol("not a scalar");

/** scalarOf is an AnyValue's scalar as JSON (int64s as numbers while exact, else text; bytes as base64), or NOT_SCALAR for an array or map. */
function scalarOf(v: AnyValue): unknown {
  if (typeof v !== "object" || v === null) return null;
  if (Object.hasOwn(v, "stringValue")) return typeof v.stringValue === "string" ? v.stringValue : String(v.stringValue);
  if (Object.hasOwn(v, "boolValue")) return v.boolValue === true;
  if (Object.hasOwn(v, "intValue")) return intOf(v.intValue);
  if (Object.hasOwn(v, "doubleValue")) {
    const d = typeof v.doubleValue === "number" ? v.doubleValue : Number(v.doubleValue);
    return Number.isFinite(d) ? d : String(v.doubleValue);
  }
  if (Object.hasOwn(v, "bytesValue")) return v.bytesValue instanceof Uint8Array ? Buffer.from(v.bytesValue).toString("base64") : String(v.bytesValue);
  if (Object.hasOwn(v, "arrayValue") || Object.hasOwn(v, "kvlistValue")) return NOT_SCALAR;
  return null;
}

interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
  toString(): string;
}
const isLong = (v: unknown): v is LongLike =>
  typeof v === "object" && v !== null && typeof (v as LongLike).low === "number" && typeof (v as LongLike).high === "number";

function intOf(v: unknown): number | string {
  if (typeof v === "number") return v;
  if (isLong(v)) {
    const n = v.unsigned ? (v.high >>> 0) * 4294967296 + (v.low >>> 0) : v.high * 4294967296 + (v.low >>> 0);
    return Number.isSafeInteger(n) ? n : v.toString();
  }
  const s = String(v);
  const n = Number(s);
  return Number.isSafeInteger(n) ? n : s;
}

function numberOf(v: unknown): number {
  if (typeof v === "number") return v;
  if (isLong(v)) return v.low;
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

/**
 * nanosToMs reads a fixed64 of nanoseconds (a protobufjs Long, a number, or OTLP/JSON's decimal text) as whole
 * milliseconds, exactly; 0 when absent or unreadable.
 */
export function nanosToMs(v: unknown): number {
  if (typeof v === "number") return Number.isFinite(v) && v > 0 ? Math.floor(v / 1e6) : 0;
  if (isLong(v)) {
    const high = v.high >>> 0;
    const low = v.low >>> 0;
    // high·2³² = high·4294·10⁶ + high·967296, so the division stays exact within 2⁵³
    return high * 4294 + Math.floor((high * 967296 + low) / 1e6);
  }
  if (typeof v === "string" && /^\d{1,20}$/.test(v)) return v.length <= 6 ? 0 : Number(v.slice(0, -6));
  return 0;
}

function hexOf(v: unknown): string {
  if (v instanceof Uint8Array) return v.byteLength > 0 ? Buffer.from(v).toString("hex") : "";
  return typeof v === "string" ? v : "";
}
