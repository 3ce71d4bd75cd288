// request: the paging part of a read (from, to, cursorID, cursorTS, pageSize) checked per contract §5.
import { badRequest } from "../errors.ts";
import { isUuid } from "../ids.ts";
import type { ScanRange } from "../storage/keys.ts";
import { lowerBoundMs, parseRfc3339, upperBoundMs } from "../time.ts";

/** PagingInput holds the raw values; undefined means absent (JSON null is mapped to it by callers). */
export interface PagingInput {
  from?: unknown;
  to?: unknown;
  cursorID?: unknown;
  cursorTS?: unknown;
  pageSize?: unknown;
}

const FAR_FUTURE = 8.64e15;

/** parsePaging turns raw paging values into a scan range and page size, or throws the 400 of the first fault. */
export function parsePaging(input: PagingInput, pageSizeFromText: boolean): { range: ScanRange; pageSize: number } {
  const from = instant("from", input.from);
  const to = instant("to", input.to);
  if (from && to && (from.ms > to.ms || (from.ms === to.ms && from.subNs > to.subNs))) {
    throw badRequest("VALIDATION_QUERY_TIME_RANGE", "from is after to; swap them (from is inclusive, to exclusive)", { field: "from" });
  }
  const pageSize = parsePageSize(input.pageSize, pageSizeFromText);
  const range: ScanRange = {
    fromMs: from ? Math.max(0, lowerBoundMs(from)) : 0,
    toMs: to ? upperBoundMs(to) : FAR_FUTURE,
  };
  const hasId = input.cursorID !== undefined;
  const hasTs = input.cursorTS !== undefined;
  if (hasId !== hasTs) {
    throw fieldError(
      hasId ? "cursorTS" : "cursorID",
      "send cursorID and cursorTS together: the id and server_timestamp of the last entry of the previous page",
    );
  }
  if (hasId) {
    if (typeof input.cursorID !== "string" || !isUuid(input.cursorID)) {
      throw fieldError("cursorID", "cursorID must be the lowercase UUID from X-Next-Cursor-ID");
    }
    const ts = typeof input.cursorTS === "string" ? parseRfc3339(input.cursorTS) : null;
    if (!ts) throw fieldError("cursorTS", "cursorTS must be the RFC 3339 date-time from X-Next-Cursor-TS");
    // an instant between two milliseconds sorts after every entry of the lower one
    range.after = ts.subNs > 0 ? { ms: ts.ms, id: "g" } : { ms: ts.ms, id: input.cursorID };
  }
  return { range, pageSize };
}

function instant(name: string, value: unknown) {
  if (value === undefined) return undefined;
  const t = typeof value === "string" ? parseRfc3339(value) : null;
  if (!t) {
    throw badRequest(
      "VALIDATION_QUERY_TIME_RANGE",
      `${name} must be an RFC 3339 date-time with a zone, e.g. 2026-11-22T10:00:00Z (got ${JSON.stringify(value)})`,
      { field: name },
    );
  }
  return t;
}

function parsePageSize(value: unknown, fromText: boolean): number {
  if (value === undefined) return 50;
  const n = fromText ? (typeof value === "string" && /^\d{1,4}$/.test(value) ? Number(value) : NaN) : value;
  if (typeof n !== "number" || !Number.isInteger(n) || n < 10 || n > 100) {
    throw fieldError("pageSize", `pageSize must be a whole number from 10 to 100 (got ${JSON.stringify(value)})`);
  }
  return n;
}

const fieldError = (field: string, message: string) => badRequest("VALIDATION_FAILED", message, { errors: [{ field, message, log_index: null }] });
