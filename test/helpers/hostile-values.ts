// Hostile values' shared parts, for hostile-values*.test.ts: the control characters, and reading ids back through every index and filter.
import { expect } from "bun:test";
import { WS, type TestSluice } from "./sluice.ts";

/** CONTROLS are every C0 control character and DEL. */
export const CONTROLS = [...Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)), "\u007f"];

/** unicodeName names a character as U+XXXX, for telling which character an assertion was about. */
export const unicodeName = (c: string) => `U+${c.charCodeAt(0).toString(16).padStart(4, "0")}`;

/** quoted makes a string literal of the query language, escaping backslashes and double quotes. */
export const quoted = (v: string) => `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;

/**
 * idsOf answers a query with the sorted ids it returns (first page of 100), read through every way in: the query
 * language, GET /logs filters and the body `action`; it expects 200.
 */
export async function idsOf(s: TestSluice, key: string, how: { query?: string; tags?: string; action?: string; bodyAction?: string }): Promise<string[]> {
  let res: Response;
  if (how.query !== undefined || how.bodyAction !== undefined) {
    res = await s.call("POST", `${WS}/logs/query`, { key, body: { query: how.query ?? "", action: how.bodyAction, pageSize: 100 } });
  } else {
    const q = new URLSearchParams({ pageSize: "100", ...(how.tags ? { tags: how.tags } : {}), ...(how.action ? { action: how.action } : {}) });
    res = await s.call("GET", `${WS}/logs?${q}`, { key });
  }
  expect({ how, status: res.status }).toEqual({ how, status: 200 });
  return ((await res.json()) as { id: string }[]).map((e) => e.id).sort();
}
