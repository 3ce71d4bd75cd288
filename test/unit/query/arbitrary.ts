// arbitrary: fast-check generators of valid query ASTs (every shape parseQuery can return) and of query-like text.
import fc from "fast-check";
import type { NullValue, ObjectFacet, Query, StringValue, Term } from "../../../src/query/ast.ts";
import { ENVIRONMENTS, LEVELS } from "../../../src/schema.ts";
import { parseRfc3339 } from "../../../src/time.ts";
import { words } from "../../../src/words.ts";

/** SPECIAL are the characters the lexer treats specially, plus a few that test Unicode handling. */
export const SPECIAL = [" ", " ", '"', "\\", ",", "=", "!", "~", "@", "<", ">", ".", "*", "\t", "😀", "É", "ß", "-", "_"];
const LETTERS = ["a", "b", "Z", "1", "0", "n", "u", "l", "é"];

/** queryChar is one character of random query-like text. */
export const queryChar = fc.constantFrom(...SPECIAL, ...LETTERS);
const text = fc.oneof({ weight: 5, arbitrary: fc.string({ unit: queryChar, minLength: 1, maxLength: 10 }) }, fc.constantFrom("null", "NULL", "a b", '"', "\\"));
const segment = fc.string({ unit: fc.constantFrom("a", "B", "_", "1", '"', ",", "\\", "é", "*"), minLength: 1, maxLength: 5 }); // no space, dot or operator
const objectFacet = fc.constantFrom<ObjectFacet>("actor", "target", "context", "metadata");
const eqOp = fc.constantFrom<"=" | "!=">("=", "!=");
const matchOp = fc.constantFrom<"=" | "!=" | "~" | "!~">("=", "!=", "~", "!~");
const rangeOp = fc.constantFrom<"<" | ">" | "<=" | ">=">("<", ">", "<=", ">=");
const group = <T>(a: fc.Arbitrary<T>) => fc.array(a, { minLength: 1, maxLength: 3 });

const str = (t: string): StringValue => ({ kind: "string", text: t, pos: 0 });
const NULL: NullValue = { kind: "null", pos: 0 };
const stringOrNull = (op: string) => (op === "=" || op === "!=" ? fc.oneof(text.map(str), fc.constant(NULL)) : text.map(str));

const uuid = fc.tuple(fc.uuid(), fc.boolean()).map(([u, up]) => str(up ? u.toUpperCase() : u));
const timeText = fc
  .tuple(fc.integer({ min: 0, max: 4_102_444_800_000 }), fc.integer({ min: 0, max: 999_999_999 }), fc.constantFrom("Z", "z", "+01:00", "-05:30", "+00:00"))
  .map(([ms, ns, zone]) => `${new Date(ms).toISOString().slice(0, 19)}.${String(ns).padStart(9, "0").replace(/0+$/, "") || "0"}${zone}`);
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom("1e400", "-0.5E+2", "0"),
);

/** term generates any term parseQuery can produce (positions left at 0). */
export const term: fc.Arbitrary<Term> = fc.oneof(
  fc.record({ kind: fc.constant("id" as const), op: eqOp, values: group(uuid), pos: fc.constant(0) }),
  fc.record({
    kind: fc.constant("enum" as const),
    facet: fc.constant("level" as const),
    op: eqOp,
    values: group(fc.constantFrom(...LEVELS).map(str)),
    pos: fc.constant(0),
  }),
  fc.record({
    kind: fc.constant("enum" as const),
    facet: fc.constant("environment" as const),
    op: eqOp,
    values: group(fc.constantFrom(...ENVIRONMENTS).map(str)),
    pos: fc.constant(0),
  }),
  fc
    .tuple(fc.constantFrom<"action" | "message">("action", "message"), fc.constantFrom<"=" | "!=" | "~" | "!~" | "@">("=", "!=", "~", "!~", "@"))
    .chain(([facet, op]) => group(stringOrNull(op)).map((values) => ({ kind: "text" as const, facet, op, values, pos: 0 }))),
  matchOp.chain((op) => group(stringOrNull(op)).map((values) => ({ kind: "tag" as const, op, values, pos: 0 }))),
  fc.record({
    kind: fc.constant("time" as const),
    facet: fc.constantFrom<"server_timestamp" | "client_timestamp">("server_timestamp", "client_timestamp"),
    op: fc.constantFrom<"<" | ">" | "<=" | ">=" | "=" | "!=">("<", ">", "<=", ">=", "=", "!="),
    values: group(timeText.map((t) => ({ kind: "time" as const, text: t, instant: parseRfc3339(t)!, pos: 0 }))),
    pos: fc.constant(0),
  }),
  fc.record({ kind: fc.constant("object-null" as const), facet: objectFacet, op: eqOp, values: group(fc.constant(NULL)), pos: fc.constant(0) }),
  fc
    .tuple(objectFacet, fc.array(segment, { minLength: 1, maxLength: 3 }), matchOp)
    .chain(([facet, path, op]) => group(stringOrNull(op)).map((values) => ({ kind: "path" as const, facet, path, op, values, pos: 0 }))),
  fc.record({
    kind: fc.constant("range" as const),
    facet: objectFacet,
    path: fc.array(segment, { minLength: 1, maxLength: 3 }),
    op: rangeOp,
    values: group(numberText.map((t) => ({ kind: "number" as const, text: t, number: Number(t), pos: 0 }))),
    pos: fc.constant(0),
  }),
  text.map((t) => ({ kind: "free" as const, text: t, words: words(t), pos: 0 })),
);

/** query generates a valid query AST well inside the limits. */
export const query: fc.Arbitrary<Query> = fc.array(term, { maxLength: 8 }).map((terms) => ({ terms }));
