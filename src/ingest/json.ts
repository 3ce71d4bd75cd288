// json: JSON body bytes → value, with the 400s of contract §4. No I/O, so the ingest worker runs it too.
import { badRequest } from "../errors.ts";

const decoder = new TextDecoder("utf-8", { fatal: true });

/** parseJson decodes and parses the bytes of a body that readJsonBody (http/body.ts) has passed. */
export function parseJson(bytes: Uint8Array): unknown {
  const text = decode(bytes);
  if (text.trim() === "") throw badRequest("VALIDATION_EMPTY_BODY", "the request body is empty; send a JSON document");
  try {
    return JSON.parse(text);
  } catch (e) {
    throw badRequest("VALIDATION_INVALID_JSON", `the body is not valid JSON (${(e as Error).message}); check its syntax`);
  }
}

function decode(bytes: Uint8Array): string {
  try {
    return decoder.decode(bytes);
  } catch {
    throw badRequest("VALIDATION_INVALID_JSON", "the body is not valid UTF-8; send JSON encoded as UTF-8");
  }
}
