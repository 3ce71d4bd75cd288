// body: reads a JSON request body with the checks of contract §4, counting bytes as they stream in.
import { badRequest } from "../errors.ts";
import { DepthMeter } from "./depth.ts";
import { noteBodyBytes } from "./observe.ts";

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const decoder = new TextDecoder("utf-8", { fatal: true });

/** BodyLimits bound a body: its bytes, how deeply it nests, and how long it may take to arrive. */
export interface BodyLimits {
  bytes: number;
  /** nesting of objects and arrays, the outermost one counting 1 */
  depth: number;
  /** ms from the first read of the body to its end */
  timeoutMs?: number;
}

const BODY_TIMEOUT_MS = 30_000; // a client that trickles its body does not hold a request for long

/** readJson returns the parsed body, or throws the 400 that says what is wrong with it. */
export async function readJson(request: Request, limits: BodyLimits): Promise<unknown> {
  const type = request.headers.get("content-type");
  if (!type || !JSON_TYPE.test(type.trim())) {
    throw badRequest("VALIDATION_INVALID_CONTENT_TYPE", `send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : "none"})`);
  }
  const text = await readText(request, limits);
  if (text.trim() === "") throw badRequest("VALIDATION_EMPTY_BODY", "the request body is empty; send a JSON document");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest("VALIDATION_INVALID_JSON", `the body is not valid JSON (${(e as Error).message}); check its syntax`);
  }
}

async function readText(request: Request, limits: BodyLimits): Promise<string> {
  const limitBytes = limits.bytes;
  const tooLarge = () =>
    badRequest("VALIDATION_FAILED", `the body is larger than this workspace's limit of ${limitBytes} bytes; send fewer or smaller entries`, {
      errors: [{ field: "", message: `body over ${limitBytes} bytes`, log_index: null }],
      limit_bytes: limitBytes,
    });
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limitBytes) throw tooLarge();
  if (!request.body) return "";
  const meter = new DepthMeter(limits.depth);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  const deadline = Date.now() + (limits.timeoutMs ?? BODY_TIMEOUT_MS);
  let timer: Timer | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(badRequest("VALIDATION_INVALID_REQUEST", `the body did not arrive within ${Math.round((limits.timeoutMs ?? BODY_TIMEOUT_MS) / 1000)} s; send it faster or in smaller requests`)), deadline - Date.now());
  });
  try {
    for (;;) {
      const { done, value } = await Promise.race([reader.read(), late]);
      if (done) break;
      size += value.byteLength;
      if (size > limitBytes) throw tooLarge();
      if (!meter.feed(value)) {
        throw badRequest("VALIDATION_FAILED", `the body nests deeper than ${limits.depth} levels of objects and arrays; flatten it`, {
          errors: [{ field: "", message: `body nests deeper than ${limits.depth} levels`, log_index: null }],
        });
      }
      chunks.push(value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  } finally {
    clearTimeout(timer);
  }
  noteBodyBytes(request, size);
  try {
    return decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  } catch {
    throw badRequest("VALIDATION_INVALID_JSON", "the body is not valid UTF-8; send JSON encoded as UTF-8");
  }
}
