// filters: the simple filters of GET /logs and the body `action` of POST /logs/query (contract §5),
// expressed as query terms so that every read runs through the same planner and matcher.
import type { Level } from "../schema.ts";
import type { Term } from "./ast.ts";

export interface SimpleFilters {
  levels?: Level[];
  tags?: string[];
  /** case-insensitive substring of action; `*` is literal */
  action?: string;
  /** case-insensitive substring of message; `*` is literal */
  message?: string;
}

/** filterTerms turns simple filters into terms: lists are any-of, everything ANDed. */
export function filterTerms(f: SimpleFilters): Term[] {
  const terms: Term[] = [];
  const values = (xs: string[]) => xs.map((text) => ({ kind: "string" as const, text, pos: 0 }));
  if (f.levels?.length) terms.push({ kind: "enum", facet: "level", op: "=", values: values(f.levels), pos: 0 });
  if (f.tags?.length) terms.push({ kind: "tag", op: "=", values: values(f.tags), pos: 0 });
  if (f.action) terms.push({ kind: "literal", facet: "action", text: f.action, pos: 0 });
  if (f.message) terms.push({ kind: "literal", facet: "message", text: f.message, pos: 0 });
  return terms;
}
