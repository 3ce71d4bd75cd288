// otlp: OpenTelemetry OTLP/HTTP log export requests (protobuf or JSON) → entries, by the mapping of contract §11.
import { badRequest } from "../../errors.ts";
import { DEPTH_MAX, type Item, sampleOf, TooDeep, timestampOf } from "./item.ts";
import { parseBoundedJson } from "./json.ts";
import { levelOfName, levelOfOtel } from "./levels.ts";
import { define, nestDotted } from "./nest.ts";
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
      request = ExportLogsServiceRequest.decode(bytes) as typeof request;
    } catch (e) {
      throw badRequest("VALIDATION_INVALID_REQUEST", `the body is not an OTLP ExportLogsServiceRequest in protobuf (${(e as Error).message})`);
    }
  }
  if (typeof request !== "object" || request === null || Array.isArray(request)) {
    throw badRequest("VALIDATION_INVALID_REQUEST", "the body is not an OTLP ExportLogsServiceRequest: send an object with resourceLogs");
  }
  const items: Item[] = [];
  for (const rl of list<ResourceLogs>(request.resourceLogs)) {
    const resource = attributesOf(rl?.resource?.attributes);
    for (const sl of list<ScopeLogs>(rl?.scopeLogs)) {
      const scopeName = text(sl?.scope?.name);
      const scopeVersion = text(sl?.scope?.version);
      for (const record of list<LogRecord>(sl?.logRecords)) items.push(mapRecord(record, resource, scopeName, scopeVersion, receivedMs));
    }
  }
  return items;
}

/** encodeOtlpResponse is the ExportLogsServiceResponse, with partialSuccess when entries were rejected. */
export function encodeOtlpResponse(rejected: number, errorMessage: string, json: boolean): Uint8Array | string {
  const body = rejected > 0 ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {};
  if (json) return JSON.stringify(body);
  return ExportLogsServiceResponse.encode(ExportLogsServiceResponse.fromObject(body)).finish();
}

function mapRecord(record: LogRecord, resource: Record<string, unknown> | TooDeep, scopeName: string, scopeVersion: string, receivedMs: number): Item {
  const sample = () => sampleOf(record);
  if (typeof record !== "object" || record === null) return { problem: { field: "", message: "a log record must be an object" }, sample };
  try {
    if (resource instanceof TooDeep) throw resource;
    const attributes = attributesOf(record.attributes);
    if (attributes instanceof TooDeep) throw attributes;
    const event = attributes.event as Record<string, unknown> | undefined;
    const eventAttr = typeof event === "object" && event !== null ? event.name : undefined;
    const action = text(record.eventName) || (typeof eventAttr === "string" ? eventAttr.trim() : "") || scopeName || "log";
    const severity = numberOf(record.severityNumber);
    const level = (severity !== 0 ? levelOfOtel(severity) : undefined) ?? levelOfName(record.severityText) ?? "info";
    let message: string | null = null;
    const metadata: Record<string, unknown> = attributes;
    if (record.body) {
      const body = anyValue(record.body, 1);
      if (typeof body === "string") message = body;
      else if (typeof body === "object" && body !== null) define(metadata, "body", body);
      else if (body !== undefined && body !== null) message = String(body);
    }
    const time = nanosToMs(record.timeUnixNano) || nanosToMs(record.observedTimeUnixNano) || receivedMs;
    const context: Record<string, unknown> = { ...resource };
    if (scopeName || scopeVersion) define(context, "scope", { name: scopeName, version: scopeVersion });
    const traceId = hexOf(record.traceId);
    const spanId = hexOf(record.spanId);
    if (traceId) define(context, "trace_id", traceId);
    if (spanId) define(context, "span_id", spanId);
    return {
      entry: {
        action,
        level,
        message,
        clientTimestamp: timestampOf(time),
        context: Object.keys(context).length > 0 ? context : null,
        metadata: Object.keys(metadata).length > 0 ? metadata : null,
      },
      sample,
    };
  } catch (e) {
    if (e instanceof TooDeep) return { problem: { field: "metadata", message: e.message }, sample };
    throw e;
  }
}

const list = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);
const text = (v: unknown): string => (typeof v === "string" ? v.trim() : "");

/** attributesOf turns a KeyValue list into an object, dotted keys nested; a value nested too deeply yields TooDeep. */
function attributesOf(kvs: unknown): Record<string, unknown> | TooDeep {
  try {
    return nestDotted(kvlistOf(kvs, 1));
  } catch (e) {
    if (e instanceof TooDeep) return e;
    throw e;
  }
}

function kvlistOf(kvs: unknown, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list<KeyValue>(kvs)) {
    if (typeof kv !== "object" || kv === null || typeof kv.key !== "string") continue;
    define(out, kv.key, kv.value ? anyValue(kv.value, depth + 1) : null);
  }
  return out;
}

/** anyValue converts an AnyValue to JSON: int64s as numbers while exact (else text), bytes as base64. */
function anyValue(v: AnyValue, depth: number): unknown {
  if (depth > DEPTH_MAX) throw new TooDeep();
  if (typeof v !== "object" || v === null) return null;
  if (Object.hasOwn(v, "stringValue")) return typeof v.stringValue === "string" ? v.stringValue : String(v.stringValue);
  if (Object.hasOwn(v, "boolValue")) return v.boolValue === true;
  if (Object.hasOwn(v, "intValue")) return intOf(v.intValue);
  if (Object.hasOwn(v, "doubleValue")) {
    const d = typeof v.doubleValue === "number" ? v.doubleValue : Number(v.doubleValue);
    return Number.isFinite(d) ? d : String(v.doubleValue);
  }
  if (Object.hasOwn(v, "arrayValue")) return list<AnyValue>(v.arrayValue?.values).map((x) => anyValue(x, depth + 1));
  if (Object.hasOwn(v, "kvlistValue")) return kvlistOf(v.kvlistValue?.values, depth);
  if (Object.hasOwn(v, "bytesValue")) return v.bytesValue instanceof Uint8Array ? Buffer.from(v.bytesValue).toString("base64") : String(v.bytesValue);
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
  const s = isLong(v) ? v.toString() : String(v);
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
