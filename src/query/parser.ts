// parser: query text → typed AST (contract §6). It reports the first fault in the contract's
// order: length, syntax (the lexer, left to right), term count, value count, then per term
// left to right its facet, operator and values.
import { badRequest, type ApiError, type ErrorCode } from "../errors.ts";
import { ENVIRONMENTS, LEVELS } from "../schema.ts";
import { parseRfc3339 } from "../time.ts";
import type {
  EqOp,
  FacetTerm,
  MatchOp,
  NullValue,
  NumberValue,
  ObjectFacet,
  Operator,
  Query,
  RangeOp,
  StringValue,
  Term,
  TextOp,
  TimeOp,
  TimeValue,
} from "./ast.ts";
import { OBJECT_FACETS } from "./ast.ts";
import { lex, type RawFacetTerm, type RawMember } from "./lexer.ts";
import { words } from "../words.ts";

/** MAX_QUERY_LENGTH is the longest query, in UTF-16 code units. */
export const MAX_QUERY_LENGTH = 2000;
/** MAX_TERMS is the most terms of a query, free words included. */
export const MAX_TERMS = 20;
/** MAX_VALUES is the most facet values of a query, single or grouped, free words excluded. */
export const MAX_VALUES = 100;

const UUID_ANY_CASE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/** Facet is what a facet name resolves to, before its operator is known. */
type Facet =
  | { family: "id" }
  | { family: "enum"; facet: "level" | "environment"; allowed: readonly string[] }
  | { family: "text"; facet: "action" | "message" }
  | { family: "tag" }
  | { family: "time"; facet: "server_timestamp" | "client_timestamp" }
  | { family: "object"; facet: ObjectFacet }
  | { family: "path"; facet: ObjectFacet; path: string[] };

const NAMED: Record<string, Facet> = {
  id: { family: "id" },
  level: { family: "enum", facet: "level", allowed: LEVELS },
  environment: { family: "enum", facet: "environment", allowed: ENVIRONMENTS },
  action: { family: "text", facet: "action" },
  message: { family: "text", facet: "message" },
  tag: { family: "tag" },
  tags: { family: "tag" },
  timestamp: { family: "time", facet: "server_timestamp" },
  server_timestamp: { family: "time", facet: "server_timestamp" },
  client_timestamp: { family: "time", facet: "client_timestamp" },
  actor: { family: "object", facet: "actor" },
  target: { family: "object", facet: "target" },
  context: { family: "object", facet: "context" },
  metadata: { family: "object", facet: "metadata" },
};

const OPERATORS: Record<Facet["family"], readonly Operator[]> = {
  id: ["=", "!="],
  enum: ["=", "!="],
  text: ["=", "!=", "~", "!~", "@"],
  tag: ["=", "!=", "~", "!~"],
  time: ["=", "!=", "<", ">", "<=", ">="],
  object: ["=", "!="],
  path: ["=", "!=", "~", "!~", "<", ">", "<=", ">="],
};

const FACET_LIST = `${Object.keys(NAMED).join(", ")}, or a field such as metadata.<key>`;

/** parseQuery turns query text into its AST, or throws the ApiError (400) of its first fault. */
export function parseQuery(text: string): Query {
  if (text.length > MAX_QUERY_LENGTH) {
    throw fault(
      "VALIDATION_QUERY_CONSTRAINT",
      MAX_QUERY_LENGTH,
      `query is ${text.length} characters long, over the limit of ${MAX_QUERY_LENGTH}`,
      "shorten it or split it into several queries",
    );
  }
  const raw = lex(text);
  if (raw.length > MAX_TERMS) {
    throw fault(
      "VALIDATION_QUERY_CONSTRAINT",
      raw[MAX_TERMS].pos,
      `query has ${raw.length} terms, over the limit of ${MAX_TERMS}`,
      "remove terms, or put values of one facet into a group (level=error,warn)",
    );
  }
  const members = raw.flatMap((t) => (t.kind === "facet" ? t.members : []));
  if (members.length > MAX_VALUES) {
    throw fault(
      "VALIDATION_QUERY_CONSTRAINT",
      members[MAX_VALUES].pos,
      `query has ${members.length} facet values, over the limit of ${MAX_VALUES}`,
      "remove values from its groups",
    );
  }
  const terms: Term[] = raw.map((t) => (t.kind === "free" ? { kind: "free", text: t.text, words: words(t.text), pos: t.pos } : facetTerm(text, t)));
  return { terms };
}

function facetTerm(text: string, t: RawFacetTerm): FacetTerm {
  const facet = resolveFacet(text, t);
  if (!OPERATORS[facet.family].includes(t.op)) {
    const name = facet.family === "path" ? "an object field" : t.facet;
    throw invalid(t.opPos, `operator ${t.op} is not allowed for ${name}`, `use one of ${OPERATORS[facet.family].join(" ")}`);
  }
  const pos = t.pos;
  switch (facet.family) {
    case "id": {
      const op = t.op as EqOp;
      return { kind: "id", op, pos, values: t.members.map((m) => uuid(noNull(m, "id"))) };
    }
    case "enum": {
      const op = t.op as EqOp;
      return { kind: "enum", facet: facet.facet, op, pos, values: t.members.map((m) => oneOf(noNull(m, facet.facet), facet.facet, facet.allowed)) };
    }
    case "text":
      return { kind: "text", facet: facet.facet, op: t.op as TextOp, pos, values: t.members.map((m) => stringOrNull(m, t)) };
    case "tag":
      return { kind: "tag", op: t.op as MatchOp, pos, values: t.members.map((m) => stringOrNull(m, t)) };
    case "time":
      return { kind: "time", facet: facet.facet, op: t.op as TimeOp, pos, values: t.members.map((m) => instant(noNull(m, facet.facet))) };
    case "object":
      return { kind: "object-null", facet: facet.facet, op: t.op as EqOp, pos, values: t.members.map((m) => onlyNull(m, facet.facet)) };
    case "path":
      if (t.op === "<" || t.op === ">" || t.op === "<=" || t.op === ">=") {
        return { kind: "range", facet: facet.facet, path: facet.path, op: t.op as RangeOp, pos, values: t.members.map((m) => number(m, t)) };
      }
      return { kind: "path", facet: facet.facet, path: facet.path, op: t.op as MatchOp, pos, values: t.members.map((m) => stringOrNull(m, t)) };
  }
}

function resolveFacet(text: string, t: RawFacetTerm): Facet {
  const name = t.facet;
  if (Object.hasOwn(NAMED, name)) return NAMED[name];
  const [root, ...path] = name.split(".");
  const objectRoot = OBJECT_FACETS.find((f) => f === root);
  if (objectRoot && path.length > 0) {
    if (path.includes("")) {
      throw invalid(t.pos, `empty segment in the field path ${JSON.stringify(name)}`, "write one key between each pair of dots, e.g. metadata.http.status");
    }
    return { family: "path", facet: objectRoot, path };
  }
  const lower = name.toLowerCase();
  const hint =
    Object.hasOwn(NAMED, lower) || OBJECT_FACETS.some((f) => lower.startsWith(`${f}.`))
      ? `facet names are case-sensitive: write ${lower.split(".")[0]}`
      : `use one of ${FACET_LIST}; to search text holding ${JSON.stringify(t.op)}, quote it: ${JSON.stringify(text.slice(t.pos, t.end))}`;
  throw invalid(t.pos, `unknown facet ${JSON.stringify(name)}`, hint);
}

const isNull = (m: RawMember): boolean => !m.quoted && m.text === "null";

function noNull(m: RawMember, facet: string): RawMember {
  if (isNull(m)) throw invalid(m.pos, `${facet} has no null check`, `compare it with a value; to match the text null, quote it: ${facet}="null"`);
  return m;
}

function stringOrNull(m: RawMember, t: RawFacetTerm): StringValue | NullValue {
  if (!isNull(m)) return { kind: "string", text: m.text, pos: m.pos };
  if (t.op === "=" || t.op === "!=") return { kind: "null", pos: m.pos };
  throw invalid(
    m.pos,
    `null is allowed only with = or !=, not with ${t.op}`,
    `write ${t.facet}=null or ${t.facet}!=null, or quote it to use the text: ${t.facet}${t.op}"null"`,
  );
}

function uuid(m: RawMember): StringValue {
  if (!UUID_ANY_CASE.test(m.text)) {
    throw invalid(
      m.pos,
      `id ${JSON.stringify(m.text)} is not a UUID`,
      "write the entry id as 8-4-4-4-12 hex digits, e.g. 0192f3a4-5b6c-7d8e-9f01-23456789abcd",
    );
  }
  return { kind: "string", text: m.text, pos: m.pos };
}

function oneOf(m: RawMember, facet: string, allowed: readonly string[]): StringValue {
  if (!allowed.includes(m.text)) {
    throw invalid(m.pos, `unknown ${facet} ${JSON.stringify(m.text)}`, `use one of ${allowed.join(", ")} (lowercase)`);
  }
  return { kind: "string", text: m.text, pos: m.pos };
}

function instant(m: RawMember): TimeValue {
  const parsed = parseRfc3339(m.text);
  if (!parsed) {
    throw fault(
      "VALIDATION_QUERY_TIME_RANGE",
      m.pos,
      `${JSON.stringify(m.text)} is not an RFC 3339 date-time`,
      "write a date, T, a time and a zone, e.g. 2026-11-22T10:00:00Z or 2026-11-22T10:00:00.5+01:00",
    );
  }
  return { kind: "time", text: m.text, instant: parsed, pos: m.pos };
}

function onlyNull(m: RawMember, facet: ObjectFacet): NullValue {
  if (!isNull(m)) {
    throw invalid(
      m.pos,
      `${facet} as a whole can only be checked for null`,
      `write ${facet}=null or ${facet}!=null, or compare one field: ${facet}.<key>=value`,
    );
  }
  return { kind: "null", pos: m.pos };
}

function number(m: RawMember, t: RawFacetTerm): NumberValue {
  if (!JSON_NUMBER.test(m.text)) {
    throw invalid(
      m.pos,
      `${t.op} on an object field needs a number, not ${isNull(m) ? "null" : JSON.stringify(m.text)}`,
      "write a JSON number, e.g. 250, -1.5 or 2e3; compare text with = or ~",
    );
  }
  return { kind: "number", text: m.text, number: Number(m.text), pos: m.pos };
}

function invalid(pos: number, what: string, fix: string): ApiError {
  return fault("VALIDATION_QUERY_INVALID", pos, what, fix);
}

function fault(code: ErrorCode, pos: number, what: string, fix: string): ApiError {
  return badRequest(code, `invalid query at position ${pos}: ${what}; ${fix}`, { position: pos });
}
