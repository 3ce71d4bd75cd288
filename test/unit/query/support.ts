// support: shared helpers of the query unit tests (entry rows, position stripping, error capture).
import { expect } from "bun:test";
import { ApiError } from "../../../src/errors.ts";
import type { Environment, Level } from "../../../src/schema.ts";
import type { Entry, Row } from "../../../src/storage/entries.ts";

export const QUERY_CODES = ["VALIDATION_QUERY_SYNTAX", "VALIDATION_QUERY_INVALID", "VALIDATION_QUERY_TIME_RANGE", "VALIDATION_QUERY_CONSTRAINT"] as const;
export type QueryCode = (typeof QUERY_CODES)[number];

/** stripPositions removes every `pos` so that ASTs compare by meaning only. */
export function stripPositions<T>(value: T): T {
  return JSON.parse(JSON.stringify(value, (key, v) => (key === "pos" ? undefined : v)));
}

/** caught runs f and returns the ApiError it throws; fails the test when it returns or throws anything else. */
export function caught(f: () => unknown): ApiError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(ApiError);
    return e as ApiError;
  }
  throw new Error("expected an ApiError, but nothing was thrown");
}

/** expectFault checks an error's status, code and details.position, and that its message points there and says how to fix it. */
export function expectFault(e: ApiError, code: QueryCode, position: number): void {
  expect({ status: e.status, code: e.code, position: e.details?.position }).toEqual({ status: 400, code, position });
  expect(e.message).toMatch(new RegExp(`at position ${position}: [^;]+; .+`));
}

/** EntryFields are the parts of a test entry; everything left out gets a plain default. */
export interface EntryFields {
  id?: string;
  level?: Level;
  action?: string;
  message?: string | null;
  tags?: string[];
  actor?: object | null;
  target?: object | null;
  context?: object | null;
  metadata?: object | null;
  clientMs?: number;
  serverMs?: number;
}

export const T0 = Date.UTC(2026, 10, 22, 10, 0, 0, 0);
export const ENV: Environment = "production";
export const ID = "0192f3a4-5b6c-7d8e-9f01-23456789abcd";

/** row builds a stored entry as the reader sees it. */
export function row(f: EntryFields = {}): Row {
  const entry: Entry = {
    id: f.id ?? ID,
    level: f.level ?? "info",
    action: f.action ?? "user.login",
    message: f.message === undefined ? "hello" : f.message,
    tags: f.tags ?? [],
    clientMs: f.clientMs ?? T0,
    actor: (f.actor ?? null) as Entry["actor"],
    target: (f.target ?? null) as Entry["target"],
    context: (f.context ?? null) as Entry["context"],
    metadata: (f.metadata ?? null) as Entry["metadata"],
  };
  return { serverMs: f.serverMs ?? T0, entry };
}
