// respond: JSON answers and the error body of contract §7.
import type { ApiError } from "../errors.ts";

/** Reply is the part of Elysia's context an answer goes through; its headers already hold the request id and rate-limit headers. */
export interface Reply {
  status?: number | string;
  headers: Record<string, string | number>;
}

/**
 * json answers with a JSON body through `set`: Elysia builds the one Response from the text. A Response returned
 * instead is built twice, since Elysia rebuilds it to add set's headers and streams its body.
 */
export function json(set: Reply, body: unknown, status = 200, headers?: Record<string, string>): string {
  return jsonText(set, JSON.stringify(body), status, headers);
}

/** jsonText is json for a body already written as JSON text. */
export function jsonText(set: Reply, text: string, status = 200, headers?: Record<string, string>): string {
  set.status = status;
  set.headers["content-type"] = "application/json";
  if (headers) Object.assign(set.headers, headers);
  return text;
}

/** errorReply renders an ApiError as {error_code, message, request_id, details?}. */
export function errorReply(set: Reply, e: ApiError, requestId: string): string {
  const body: Record<string, unknown> = { error_code: e.code, message: e.message, request_id: requestId };
  if (e.details) body.details = e.details;
  return json(set, body, e.status, e.headers);
}

/** requestUrl parses a request's URL; an HTTP/1.0 request without Host has a relative one. */
export const requestUrl = (request: Request): URL => new URL(request.url, "http://localhost");
