// respond: JSON responses and the error body of contract §7.
import type { ApiError } from "../errors.ts";

/** json answers with a JSON body. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
}

/** errorResponse renders an ApiError as {error_code, message, request_id, details?}. */
export function errorResponse(e: ApiError, requestId: string): Response {
  const body: Record<string, unknown> = { error_code: e.code, message: e.message, request_id: requestId };
  if (e.details) body.details = e.details;
  return json(body, e.status, e.headers);
}

/** requestUrl parses a request's URL; an HTTP/1.0 request without Host has a relative one. */
export const requestUrl = (request: Request): URL => new URL(request.url, "http://localhost");
