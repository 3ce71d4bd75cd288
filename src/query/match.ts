// match: the naive reference evaluator of §6. It decides one entry at a time, straight from the
// contract's words; any index plan must return exactly the entries this accepts.
import type { Environment } from "../schema.ts";
import type { Entry, Row } from "../storage/entries.ts";
import type { Instant } from "../time.ts";
import type { NullValue, ObjectFacet, Query, RangeOp, StringValue, Term, TimeOp } from "./ast.ts";
import { words } from "../words.ts";

/** matchQuery tells whether an entry of environment env matches every term of the query. */
export function matchQuery(q: Query, row: Row, env: Environment): boolean {
  return q.terms.every((t) => matchTerm(t, row, env));
}

/** matchTerm tells whether an entry of environment env matches one term. */
export function matchTerm(t: Term, row: Row, env: Environment): boolean {
  const e = row.entry;
  switch (t.kind) {
    case "id":
      return group(t.op, t.values, (v) => e.id === v.text); // canonical ids are lowercase: an upper-case value finds nothing
    case "enum": {
      const actual = t.facet === "level" ? e.level : env;
      return group(t.op, t.values, (v) => actual === v.text);
    }
    case "text": {
      const text = t.facet === "action" ? e.action : e.message;
      if (t.op === "@") return t.values.some((v) => v.kind === "string" && hasAllWords(words(v.text), text));
      if (t.op === "=" || t.op === "!=")
        return group(t.op, t.values, (v) => (v.kind === "null" ? text === null : text !== null && lower(text) === lower(v.text)));
      return group(t.op, t.values, (v) => v.kind === "string" && text !== null && contains(text, v.text));
    }
    case "tag": {
      const tags = e.tags;
      if (t.op === "=" || t.op === "!=") return group(t.op, t.values, (v) => (v.kind === "null" ? tags.length === 0 : tags.includes(v.text)));
      return group(t.op, t.values, (v) => v.kind === "string" && tags.some((tag) => contains(tag, v.text)));
    }
    case "time": {
      const ms = t.facet === "server_timestamp" ? row.serverMs : e.clientMs;
      return group(t.op, t.values, (v) => compares(t.op, compareInstant(ms, v.instant)));
    }
    case "object-null": {
      const obj = e[t.facet];
      return group(t.op, t.values, () => obj === null);
    }
    case "path": {
      const field = walk(e, t.facet, t.path);
      if (t.op === "=" || t.op === "!=") return group(t.op, t.values, (v) => equalsField(field, v));
      const text = textForm(field);
      return group(t.op, t.values, (v) => v.kind === "string" && text !== undefined && contains(text, v.text));
    }
    case "range": {
      const field = walk(e, t.facet, t.path);
      return typeof field === "number" && t.values.some((v) => compares(t.op, field < v.number ? -1 : field > v.number ? 1 : 0));
    }
    case "free":
      return hasAllWords(t.words, e.action) || hasAllWords(t.words, e.message); // all in action, or all in message
    case "literal": {
      const text = t.facet === "action" ? e.action : e.message;
      return text !== null && lower(text).includes(lower(t.text));
    }
  }
}

/** textForm is how = and ~ see an object field: a string as is, a number as JSON prints it, true/false; else undefined. */
export function textForm(field: unknown): string | undefined {
  if (typeof field === "string") return field;
  if (typeof field === "number") return JSON.stringify(field);
  if (typeof field === "boolean") return field ? "true" : "false";
  return undefined; // missing, null, objects and arrays have no text form
}

/** walk follows a path of keys through nested objects (never into arrays); undefined when it is missing. */
export function walk(e: Entry, facet: ObjectFacet, path: readonly string[]): unknown {
  let at: unknown = e[facet];
  for (const key of path) {
    if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** contains is `~`: case-insensitive substring, or with a `*` a case-insensitive glob over the whole text. */
export function contains(text: string, pattern: string): boolean {
  const t = lower(text);
  const p = lower(pattern);
  return p.includes("*") ? glob(t, p.split("*")) : t.includes(p);
}

/** glob matches lowercased text against the lowercased parts that `*` separated: first a prefix, last a suffix, the rest in order between. */
export function glob(text: string, parts: string[]): boolean {
  const first = parts[0];
  const last = parts[parts.length - 1];
  if (text.length < first.length + last.length || !text.startsWith(first) || !text.endsWith(last)) return false;
  const end = text.length - last.length;
  let at = first.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const found = text.indexOf(parts[i], at); // leftmost is always safe for `*`-only globs
    if (found < 0 || found + parts[i].length > end) return false;
    at = found + parts[i].length;
  }
  return true;
}

function equalsField(field: unknown, v: StringValue | NullValue): boolean {
  if (v.kind === "null") return field === undefined || field === null;
  return textForm(field) === v.text;
}

/** hasAllWords is full-text matching: every needed word is a word of the text; no words needed adds no condition. */
export function hasAllWords(need: readonly string[], text: string | null): boolean {
  if (need.length === 0) return true;
  if (text === null) return false;
  const have = new Set(words(text));
  return need.every((w) => have.has(w));
}

// group: a group is OR; with != and !~ it means none of them, the exact complement of = and ~
function group<V>(op: string, values: readonly V[], test: (v: V) => boolean): boolean {
  const any = values.some(test);
  return op === "!=" || op === "!~" ? !any : any;
}

// compareInstant orders a whole-millisecond entry time against a query instant at full precision
function compareInstant(ms: number, t: Instant): number {
  if (ms !== t.ms) return ms < t.ms ? -1 : 1;
  return t.subNs > 0 ? -1 : 0;
}

function compares(op: TimeOp | RangeOp, sign: number): boolean {
  switch (op) {
    case "=":
    case "!=":
      return sign === 0; // the group applies the negation of !=
    case "<":
      return sign < 0;
    case ">":
      return sign > 0;
    case "<=":
      return sign <= 0;
    case ">=":
      return sign >= 0;
  }
}

const lower = (s: string): string => s.toLowerCase();
