// encoding: Content-Encoding gzip and deflate on write bodies (contract §11), decoded with the size limit enforced by
// zlib itself while it inflates, so a small bomb stops at the limit instead of filling memory.
import { gunzipSync, inflateRawSync, inflateSync } from "node:zlib";
import { badRequest } from "../errors.ts";

export type Coding = "gzip" | "deflate";

/** contentCoding reads Content-Encoding: undefined for none or identity, else gzip or deflate; any other is a 400. */
export function contentCoding(header: string | null): Coding | undefined {
  const codings = (header ?? "")
    .toLowerCase()
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return undefined;
  if (codings.length === 1 && (codings[0] === "gzip" || codings[0] === "x-gzip")) return "gzip";
  if (codings.length === 1 && codings[0] === "deflate") return "deflate";
  throw badRequest("VALIDATION_INVALID_REQUEST", `Content-Encoding ${JSON.stringify(header)} is not supported; send the body plain, gzip or deflate`);
}

const ZLIB_METHOD_DEFLATE = 8; // the low nibble of a zlib header's first byte

/**
 * decodeContent inflates a body within `limitBytes` of output. Deflate comes zlib-wrapped (RFC 9110) or, from some
 * clients, raw: the header's check bits tell which.
 */
export function decodeContent(raw: Uint8Array, coding: Coding, limitBytes: number, tooLarge: () => Error): Uint8Array {
  if (raw.byteLength === 0) return raw;
  const options = { maxOutputLength: Math.max(1, Math.min(limitBytes, 2 ** 31 - 1)) };
  try {
    if (coding === "gzip") return gunzipSync(raw, options);
    const zlibWrapped = raw.byteLength >= 2 && (raw[0] & 0x0f) === ZLIB_METHOD_DEFLATE && ((raw[0] << 8) | raw[1]) % 31 === 0;
    return zlibWrapped ? inflateSync(raw, options) : inflateRawSync(raw, options);
  } catch (e) {
    if ((e as { code?: string }).code === "ERR_BUFFER_TOO_LARGE" || e instanceof RangeError) throw tooLarge();
    throw badRequest("VALIDATION_INVALID_REQUEST", `the body is not valid ${coding} (${(e as Error).message}); compress it again or send it plain`);
  }
}
