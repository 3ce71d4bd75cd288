// body: reads a JSON request body with the checks of contract §4, counting bytes as they stream in.
import { badRequest } from "../errors.ts";

const JSON_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-8"?\s*)?$/i;
const decoder = new TextDecoder("utf-8", { fatal: true });

/** readJson returns the parsed body, or throws the 400 that says what is wrong with it. */
export async function readJson(request: Request, limitBytes: number): Promise<unknown> {
  const type = request.headers.get("content-type");
  if (!type || !JSON_TYPE.test(type.trim())) {
    throw badRequest("VALIDATION_INVALID_CONTENT_TYPE", `send the body as JSON with Content-Type: application/json (got ${type ? JSON.stringify(type) : "none"})`);
  }
  const text = await readText(request, limitBytes);
  if (text.trim() === "") throw badRequest("VALIDATION_EMPTY_BODY", "the request body is empty; send a JSON document");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest("VALIDATION_INVALID_JSON", `the body is not valid JSON (${(e as Error).message}); check its syntax`);
  }
}

async function readText(request: Request, limitBytes: number): Promise<string> {
  const tooLarge = () =>
    badRequest("VALIDATION_FAILED", `the body is larger than this workspace's limit of ${limitBytes} bytes; send fewer or smaller entries`, {
      errors: [{ field: "", message: `body over ${limitBytes} bytes`, log_index: null }],
      limit_bytes: limitBytes,
    });
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > limitBytes) throw tooLarge();
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limitBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
  try {
    return decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
  } catch {
    throw badRequest("VALIDATION_INVALID_JSON", "the body is not valid UTF-8; send JSON encoded as UTF-8");
  }
}
