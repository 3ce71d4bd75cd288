// body: reads a JSON request body with the checks of contract §4, scanning bytes as they stream in; gzip and
// deflate bodies (contract §11) are decoded with the size limit applied to the decoded bytes.
import { ClientClosed, badRequest } from "../errors.ts";
import { decodeContent, contentCoding } from "./encoding.ts";
import { parseJson } from "../ingest/json.ts";
import { JsonScan, escapesSurrogate, type JsonBody } from "../ingest/scan.ts";
import { noteBodyBytes } from "./observe.ts";

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const NDJSON_TYPE = /^application\/(x-ndjson|jsonl|x-jsonlines)\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;

/** BodyLimits bound a body: its bytes, how deeply it nests, and how long it may take to arrive. */
export interface BodyLimits {
  bytes: number;
  /** nesting of objects and arrays, the outermost one counting 1 */
  depth: number;
  /** ms from the first read of the body to its end */
  timeoutMs?: number;
}

const BODY_TIMEOUT_MS = 30_000; // a client that trickles its body does not hold a request for long
const SMALL_BODY = 64 * 1024; // a body of declared length up to this is read at once, larger ones stream through the checks

/** readJson returns the parsed body, or throws the 400 that says what is wrong with it. */
export async function readJson(request: Request, limits: BodyLimits): Promise<unknown> {
  return parseJson((await readJsonBody(request, limits)).bytes);
}

/** readJsonBody checks the type, size and nesting of a JSON body as it arrives and returns it unparsed. */
export async function readJsonBody(request: Request, limits: BodyLimits): Promise<JsonBody> {
  requireJson(request.headers.get("content-type"), false);
  return readBytes(request, limits);
}

/** isNdjson tells whether a request declares an NDJSON body (POST /logs/bulk takes one, contract §11). */
export const isNdjson = (request: Request): boolean => NDJSON_TYPE.test(request.headers.get("content-type")?.trim() ?? "");

/** readNdjsonBody reads an NDJSON body as readJsonBody reads JSON, and returns it as the JSON array of its lines. */
export async function readNdjsonBody(request: Request, limits: BodyLimits): Promise<JsonBody> {
  const lines = await readBody(request, limits.bytes, limits.timeoutMs);
  const array = ndjsonToArray(lines);
  const scan = new JsonScan(limits.depth);
  if (!scan.feed(array)) throw tooDeep(limits.depth);
  return { bytes: array, bounds: scan.entryBounds(escapesSurrogate(array)) };
}

function requireJson(type: string | null, ndjson: boolean): void {
  if (type && (JSON_TYPE.test(type.trim()) || (ndjson && NDJSON_TYPE.test(type.trim())))) return;
  throw badRequest(
    "VALIDATION_INVALID_CONTENT_TYPE",
    `send the body as JSON with Content-Type: application/json${ndjson ? " (or NDJSON with application/x-ndjson)" : ""} (got ${type ? JSON.stringify(type) : "none"})`,
  );
}

/**
 * readBody reads any body within `limitBytes`, decoding gzip or deflate as it comes (the limit applies to the decoded
 * bytes): the protocol routes of contract §11 read theirs with it.
 */
export async function readBody(request: Request, limitBytes: number, timeoutMs = BODY_TIMEOUT_MS): Promise<Uint8Array> {
  const tooLarge = tooLargeError(limitBytes);
  const coding = contentCoding(request.headers.get("content-encoding"));
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limitBytes) throw tooLarge();
  if (!request.body) return new Uint8Array(0);
  try {
    const raw = await readStream(request, undefined, 0, limitBytes, tooLarge, timeoutMs);
    return coding ? decodeContent(raw, coding, limitBytes, tooLarge) : raw;
  } catch (e) {
    throw request.signal.aborted ? new ClientClosed(e) : e;
  }
}

/**
 * ndjsonToArray turns NDJSON (one value a line, blank lines skipped) into the bytes of a JSON array of those values.
 * Each line must hold one whole value: `{"a":1},{"b":2}` on one line is refused, not read as two entries.
 */
function ndjsonToArray(bytes: Uint8Array): Uint8Array {
  const text = decodeUtf8(bytes);
  const parts: string[] = [];
  let n = 0;
  for (const line of text.split("\n")) {
    n++;
    if (line.trim() === "") continue;
    try {
      JSON.parse(line);
    } catch (e) {
      throw badRequest("VALIDATION_INVALID_JSON", `line ${n} of the NDJSON body is not one JSON value (${(e as Error).message}); send one entry a line`);
    }
    parts.push(line);
  }
  if (parts.length === 0) throw badRequest("VALIDATION_EMPTY_BODY", "the NDJSON body holds no entry; send one JSON entry a line");
  return Buffer.from(`[${parts.join(",")}]`);
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw badRequest("VALIDATION_INVALID_JSON", "the body is not valid UTF-8; send JSON encoded as UTF-8");
  }
}

const tooLargeError = (limitBytes: number) => () =>
  badRequest("VALIDATION_FAILED", `the body is larger than this workspace's limit of ${limitBytes} bytes; send fewer or smaller entries`, {
    errors: [{ field: "", message: `body over ${limitBytes} bytes`, log_index: null }],
    limit_bytes: limitBytes,
  });

async function readBytes(request: Request, limits: BodyLimits): Promise<JsonBody> {
  const limitBytes = limits.bytes;
  if (request.headers.has("content-encoding")) return readDecoded(request, limits);
  const tooLarge = tooLargeError(limitBytes);
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limitBytes) throw tooLarge();
  // a small body is read whole; touching request.body would first wrap it in a stream
  if (!(declared <= SMALL_BODY) && !request.body) return { bytes: new Uint8Array(0), bounds: { size: [], nesting: [], surrogates: false } };
  const scan = new JsonScan(limits.depth);
  const timeoutMs = limits.timeoutMs ?? BODY_TIMEOUT_MS;
  let bytes: Uint8Array;
  try {
    bytes =
      declared <= SMALL_BODY
        ? await readSmall(request, scan, limits.depth, timeoutMs)
        : await readStream(request, scan, limits.depth, limitBytes, tooLarge, timeoutMs);
  } catch (e) {
    throw request.signal.aborted ? new ClientClosed(e) : e; // Bun aborts the signal when the connection closes
  }
  return { bytes, bounds: scan.entryBounds(escapesSurrogate(bytes)) };
}

/** readDecoded reads a gzip or deflate JSON body whole, decodes it within the limit, then scans it. */
async function readDecoded(request: Request, limits: BodyLimits): Promise<JsonBody> {
  const bytes = await readBody(request, limits.bytes, limits.timeoutMs);
  const scan = new JsonScan(limits.depth);
  if (!scan.feed(bytes)) throw tooDeep(limits.depth);
  return { bytes, bounds: scan.entryBounds(escapesSurrogate(bytes)) };
}

/** readSmall reads a body of known, small length at once: a stream's per-chunk machinery costs more than such a body. */
async function readSmall(request: Request, scan: JsonScan, depth: number, timeoutMs: number): Promise<Uint8Array> {
  const bytes = await new Promise<Uint8Array>((resolve, reject) => {
    const watch = deadlines.watch(timeoutMs, () => reject(late(timeoutMs)));
    request.bytes().then(
      (b) => {
        deadlines.end(watch);
        resolve(b);
      },
      (e) => {
        deadlines.end(watch);
        reject(e);
      },
    );
  });
  if (!scan.feed(bytes)) throw tooDeep(depth);
  noteBodyBytes(request, bytes.byteLength);
  return bytes;
}

async function readStream(
  request: Request,
  scan: JsonScan | undefined,
  depth: number,
  limitBytes: number,
  tooLarge: () => Error,
  timeoutMs: number,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body!.getReader();
  let watch: Watch | undefined;
  const tooSlow = new Promise<never>((_, reject) => (watch = deadlines.watch(timeoutMs, () => reject(late(timeoutMs)))));
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), tooSlow]);
      if (done) break;
      size += value.byteLength;
      if (size > limitBytes) throw tooLarge();
      if (scan && !scan.feed(value)) throw tooDeep(depth);
      chunks.push(value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  } finally {
    deadlines.end(watch!);
  }
  noteBodyBytes(request, size);
  return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
}

const late = (timeoutMs: number) =>
  badRequest("VALIDATION_INVALID_REQUEST", `the body did not arrive within ${Math.round(timeoutMs / 1000)} s; send it faster or in smaller requests`);

interface Watch {
  at: number;
  expire: () => void;
}

const SWEEP_MS = 100; // a body read fails at most this long after its time is up

/** Deadlines fails the body reads that outlast their time, with one coarse timer for them all: a timer of its own cost each request more than reading a small body. */
class Deadlines {
  private readonly watched = new Set<Watch>();
  private timer: Timer | undefined;

  watch(timeoutMs: number, expire: () => void): Watch {
    const w = { at: performance.now() + timeoutMs, expire };
    this.watched.add(w);
    this.timer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    return w;
  }

  end(w: Watch): void {
    this.watched.delete(w);
  }

  private sweep(): void {
    const now = performance.now();
    for (const w of this.watched) {
      if (w.at > now) continue;
      this.watched.delete(w);
      w.expire();
    }
    if (this.watched.size === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}

const deadlines = new Deadlines();

const tooDeep = (depth: number) =>
  badRequest("VALIDATION_FAILED", `the body nests deeper than ${depth} levels of objects and arrays; flatten it`, {
    errors: [{ field: "", message: `body nests deeper than ${depth} levels`, log_index: null }],
  });
