// errors: every client-visible failure is an ApiError carrying its error_code and HTTP status (contract §7).

export type ErrorCode =
  | "AUTH_MISSING_API_KEY"
  | "AUTH_INVALID_API_KEY"
  | "AUTH_API_KEY_EXPIRED"
  | "AUTH_CONTEXT_MISSING"
  | "AUTH_API_KEY_SCOPE_MISMATCH"
  | "RATE_LIMIT_IP_EXCEEDED"
  | "RATE_LIMIT_PLAN_EXCEEDED"
  | "RATE_LIMIT_VALIDATE_EXCEEDED"
  | "QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED"
  | "VALIDATION_INVALID_REQUEST"
  | "VALIDATION_INVALID_CONTENT_TYPE"
  | "VALIDATION_EMPTY_BODY"
  | "VALIDATION_INVALID_JSON"
  | "VALIDATION_INVALID_ENVIRONMENT"
  | "VALIDATION_FAILED"
  | "VALIDATION_BULK_LIMIT_EXCEEDED"
  | "VALIDATION_QUERY_INVALID"
  | "VALIDATION_QUERY_SYNTAX"
  | "VALIDATION_QUERY_TIME_RANGE"
  | "VALIDATION_QUERY_CONSTRAINT"
  | "LOG_NOT_FOUND"
  | "INTERNAL_AUTH_ERROR"
  | "INTERNAL_LOG_SERVICE_ERROR"
  | "INTERNAL_SERVER_ERROR";

/** FieldError is one problem with one field of one entry; log_index is null outside a batch. */
export interface FieldError {
  field: string;
  message: string;
  log_index: number | null;
}

/** ApiError is thrown anywhere on a request path and rendered by the app as the JSON error body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
    cause?: unknown,
  ) {
    super(message, { cause });
  }
}

export const unauthorized = (code: ErrorCode, message: string) => new ApiError(401, code, message);
export const forbidden = (reason: "forbidden" | "environment_mismatch", message: string) =>
  new ApiError(403, "AUTH_API_KEY_SCOPE_MISMATCH", message, { reason });
export const badRequest = (code: ErrorCode, message: string, details?: Record<string, unknown>) => new ApiError(400, code, message, details);
export const notFound = (code: ErrorCode, message: string) => new ApiError(404, code, message);

/** validationFailed reports every field problem at once, as bulk writes and admin calls require. */
export function validationFailed(errors: FieldError[], code: ErrorCode = "VALIDATION_FAILED"): ApiError {
  const first = errors[0];
  const where = first ? `${first.field || "body"}${first.log_index === null ? "" : ` (entry ${first.log_index})`}` : "body";
  const more = errors.length > 1 ? ` and ${errors.length - 1} more problem${errors.length > 2 ? "s" : ""}` : "";
  return badRequest(code, `invalid ${where}: ${first?.message ?? "see details"}${more}; see details.errors`, { errors });
}

/** CLIENT_CLOSED is the status recorded for a request whose client went away before it could be answered (nginx's 499). */
export const CLIENT_CLOSED = 499;

/** ClientClosed ends a request whose client closed the connection mid-request: no server error, and no answer to send. */
export class ClientClosed extends Error {
  constructor(cause: unknown) {
    super("the client closed the connection before its request was read", { cause });
  }
}
