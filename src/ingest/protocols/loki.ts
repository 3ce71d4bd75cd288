// loki: Grafana Loki push requests (JSON, or protobuf compressed with snappy) → entries, by the mapping of contract §11.
import { badRequest } from "../../errors.ts";
import { asBuffer, int64Of, type Item, sampleOf, timestampOf } from "./item.ts";
import { parseBoundedJson } from "./json.ts";
import { levelOf } from "./levels.ts";
import { define, nestDotted } from "./nest.ts";
import { PushRequest } from "./schemas.ts";
import { snappyUncompress } from "./snappy.ts";

/** A Loki entry whatever its encoding: the stream's labels, the timestamp in ms, the line and its structured metadata. */
interface LokiLine {
  labels: Record<string, string> | string; // a string: the labels could not be read, and why
  ms: number;
  line: unknown;
  structured: Record<string, unknown>;
  raw: () => unknown;
}

/** ABSENT marks an entry without a timestamp: it gets the receipt time. */
const ABSENT = -1;
const ACTION_FIELDS = ["action", "service_name", "app", "job"];
const LEVEL_FIELDS = ["level", "severity", "detected_level"];

/** decodeLoki reads a PushRequest; a body that is not one answers 400. `limit` bounds the snappy output. */
export function decodeLoki(bytes: Uint8Array, json: boolean, snappy: boolean, receivedMs: number, limit = 64 * 1024 * 1024): Item[] {
  const lines = json ? fromJson(bytes) : fromProtobuf(bytes, snappy, limit);
  return lines.map((l) => mapLine(l, receivedMs));
}

function fromProtobuf(bytes: Uint8Array, snappy: boolean, limit: number): LokiLine[] {
  let request: {
    streams?: {
      labels?: string;
      entries?: { timestamp?: { seconds?: unknown; nanos?: number }; line?: string; structuredMetadata?: { name?: string; value?: string }[] }[];
    }[];
  };
  try {
    request = PushRequest.decode(asBuffer(snappy ? snappyUncompress(bytes, limit) : bytes)) as typeof request;
  } catch (e) {
    throw badRequest("VALIDATION_INVALID_REQUEST", `the body is not a snappy-compressed Loki PushRequest in protobuf (${(e as Error).message})`);
  }
  const out: LokiLine[] = [];
  for (const stream of request.streams ?? []) {
    const labels = parseLabels(stream.labels ?? "");
    for (const e of stream.entries ?? []) {
      const structured: Record<string, unknown> = {};
      for (const p of e.structuredMetadata ?? []) if (typeof p.name === "string") define(structured, p.name, p.value ?? "");
      const seconds = e.timestamp?.seconds === undefined ? 0 : int64Of(e.timestamp.seconds);
      const ms = e.timestamp ? seconds * 1000 + Math.floor((e.timestamp.nanos ?? 0) / 1e6) : ABSENT;
      out.push({
        labels,
        ms,
        line: e.line ?? "",
        structured,
        raw: () => ({ labels: stream.labels, timestamp: e.timestamp, line: e.line, structuredMetadata: e.structuredMetadata }),
      });
    }
  }
  return out;
}

function fromJson(bytes: Uint8Array): LokiLine[] {
  const body = parseBoundedJson(bytes) as { streams?: unknown };
  if (typeof body !== "object" || body === null || !Array.isArray(body.streams)) {
    throw badRequest("VALIDATION_INVALID_REQUEST", 'a Loki push body is {"streams":[{"stream":{labels},"values":[["<unix ns>","<line>"]]}]}');
  }
  const out: LokiLine[] = [];
  for (const s of body.streams as { stream?: unknown; labels?: unknown; values?: unknown; entries?: unknown }[]) {
    if (typeof s !== "object" || s === null) continue;
    const labels = labelsOf(s.stream, s.labels);
    for (const v of Array.isArray(s.values) ? s.values : []) {
      const [ts, line, structured] = Array.isArray(v) ? v : [];
      out.push({ labels, ms: nsTextToMs(ts), line, structured: isObject(structured) ? structured : {}, raw: () => v });
    }
    for (const e of Array.isArray(s.entries) ? s.entries : []) {
      const ms = typeof e?.ts === "string" ? Date.parse(e.ts) : NaN; // the older push shape: RFC 3339 ts and a line
      out.push({ labels, ms, line: e?.line, structured: {}, raw: () => e });
    }
  }
  return out;
}

function labelsOf(stream: unknown, labels: unknown): Record<string, string> | string {
  if (isObject(stream)) {
    const out: Record<string, string> = {};
    for (const k in stream) define(out, k, String(stream[k]));
    return out;
  }
  return typeof labels === "string" ? parseLabels(labels) : {};
}

function mapLine(l: LokiLine, receivedMs: number): Item {
  const sample = () => sampleOf(l.raw());
  if (typeof l.labels === "string") return { problem: { field: "context", message: l.labels }, sample };
  if (typeof l.line !== "string") return { problem: { field: "message", message: "a Loki entry's line must be a string" }, sample };
  if (!Number.isFinite(l.ms))
    return { problem: { field: "clientTimestamp", message: "a Loki entry's timestamp must be Unix nanoseconds as a decimal string" }, sample };
  const fields = lineFields(l.line);
  const metadata: Record<string, unknown> = { ...l.structured };
  if (fields) for (const k in fields) define(metadata, k, fields[k]);
  const pick = (names: string[]): unknown => {
    for (const n of names) {
      for (const source of [l.labels as Record<string, unknown>, metadata]) {
        const v = Object.hasOwn(source, n) ? source[n] : undefined;
        if (v !== undefined && v !== null && v !== "") return v;
      }
    }
    return undefined;
  };
  const actionValue = pick(ACTION_FIELDS);
  const action = typeof actionValue === "string" || typeof actionValue === "number" ? String(actionValue) : "log";
  let message: unknown = l.line;
  if (fields) {
    const m = Object.hasOwn(fields, "msg") ? fields.msg : Object.hasOwn(fields, "message") ? fields.message : undefined;
    if (m !== undefined) message = typeof m === "string" || m === null ? m : JSON.stringify(m);
  }
  const context = nestDotted({ ...(l.labels as Record<string, string>) });
  const nested = nestDotted(metadata);
  return {
    entry: {
      action,
      level: levelOf(pick(LEVEL_FIELDS)) ?? "info",
      message,
      clientTimestamp: timestampOf(l.ms === ABSENT ? receivedMs : l.ms),
      context: Object.keys(context).length > 0 ? context : null,
      metadata: Object.keys(nested).length > 0 ? nested : null,
    },
    sample,
  };
}

/** lineFields are the fields of a line that is a JSON object, else undefined. */
function lineFields(line: string): Record<string, unknown> | undefined {
  const t = line.trimStart();
  if (!t.startsWith("{")) return undefined;
  try {
    const v = JSON.parse(line);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** nsTextToMs reads Loki's Unix nanoseconds (decimal text, or a number) as whole ms; NaN when it is neither. */
function nsTextToMs(ts: unknown): number {
  if (ts === undefined || ts === null) return ABSENT;
  if (typeof ts === "number") return Number.isFinite(ts) ? Math.floor(ts / 1e6) : NaN;
  if (typeof ts !== "string" || !/^\d{1,20}$/.test(ts)) return NaN;
  return ts.length <= 6 ? 0 : Number(ts.slice(0, -6));
}

const LABEL = /\s*([A-Za-z_][A-Za-z0-9_.]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|\})/y;

/** parseLabels reads a Prometheus label set, `{job="api", level="info"}`; a string (the problem) when it is not one. */
export function parseLabels(text: string): Record<string, string> | string {
  const t = text.trim();
  const out: Record<string, string> = {};
  if (t === "" || t === "{}") return out;
  if (!t.startsWith("{")) return `the stream labels ${JSON.stringify(t.slice(0, 100))} are not a label set like {job="api"}`;
  let at = 1;
  while (at < t.length) {
    LABEL.lastIndex = at;
    const m = LABEL.exec(t);
    if (!m) return `the stream labels ${JSON.stringify(t.slice(0, 100))} are not a label set like {job="api"}`;
    define(out, m[1], unquote(m[2]));
    at = LABEL.lastIndex;
    if (m[3] === "}") return at === t.length ? out : `the stream labels ${JSON.stringify(t.slice(0, 100))} go on past their closing brace`;
  }
  return `the stream labels ${JSON.stringify(t.slice(0, 100))} are not closed`;
}

const unquote = (s: string): string => s.replace(/\\(.)/g, (_m, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
