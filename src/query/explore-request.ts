// explore-request: the fields the exploring endpoints share (contract §10): query, from, to, axis, limit, each checked
// with a 400 that names it.
import { badRequest } from "../errors.ts";
import { lowerBoundMs, parseRfc3339, upperBoundMs, type Instant } from "../time.ts";
import type { Query } from "./ast.ts";
import { parseQuery } from "./parser.ts";

/** Axis names the timestamp that from, to and buckets use. */
export type Axis = "server" | "client";

/** Window is a validated time window on one axis: [fromMs, toMs) in whole milliseconds. */
export interface Window {
  axis: Axis;
  fromMs: number;
  toMs: number;
}

const FAR_FUTURE = 8.64e15;

/** fieldError is a 400 VALIDATION_FAILED naming one field. */
export const fieldError = (field: string, message: string) => badRequest("VALIDATION_FAILED", message, { errors: [{ field, message, log_index: null }] });

/** objectBody checks that a body is a JSON object and maps its JSON nulls to absent. */
export function objectBody(body: unknown, example: string): Record<string, unknown> {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw badRequest("VALIDATION_INVALID_REQUEST", `the body must be a JSON object such as ${example}`);
  }
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(body)) if (v !== null) out[k] = v;
  return out;
}

/** readQuery parses the optional query text; its faults are those of contract §6. */
export function readQuery(value: unknown): Query {
  if (value !== undefined && typeof value !== "string") throw fieldError("query", "query must be a string");
  return parseQuery((value as string | undefined) ?? "");
}

/** readAxis reads `axis`: "server" (default) or "client". */
export function readAxis(value: unknown): Axis {
  if (value === undefined) return "server";
  if (value !== "server" && value !== "client") throw fieldError("axis", `axis must be "server" or "client" (got ${JSON.stringify(value)})`);
  return value;
}

/** readInteger reads an optional whole number within [min, max]. */
export function readInteger(name: string, value: unknown, min: number, max: number, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw fieldError(name, `${name} must be a whole number from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** readWindow reads from and to; `required` makes both mandatory and from < to (hits), otherwise from ≤ to. */
export function readWindow(b: Record<string, unknown>, axis: Axis, required: boolean): Window {
  const from = instant("from", b.from, required);
  const to = instant("to", b.to, required);
  if (from && to) {
    const order = from.ms - to.ms || from.subNs - to.subNs;
    if (order > 0 || (required && order === 0)) {
      throw badRequest("VALIDATION_QUERY_TIME_RANGE", `from must be before to (from is inclusive, to exclusive)`, { field: "from" });
    }
  }
  return { axis, fromMs: from ? lowerBoundMs(from) : 0, toMs: to ? upperBoundMs(to) : FAR_FUTURE };
}

function instant(name: string, value: unknown, required: boolean): Instant | undefined {
  if (value === undefined) {
    if (required) throw badRequest("VALIDATION_QUERY_TIME_RANGE", `${name} is required: an RFC 3339 date-time such as 2026-11-22T10:00:00Z`, { field: name });
    return undefined;
  }
  const t = typeof value === "string" ? parseRfc3339(value) : null;
  if (!t) {
    throw badRequest(
      "VALIDATION_QUERY_TIME_RANGE",
      `${name} must be an RFC 3339 date-time with a zone, e.g. 2026-11-22T10:00:00Z (got ${JSON.stringify(value)})`,
      {
        field: name,
      },
    );
  }
  return t;
}
