// ast: the typed syntax tree of a query (contract §6). Every node keeps its 0-based source
// offset (`pos`, in UTF-16 code units) so that later checks can point at the fault.
import type { Instant } from "../time.ts";

/** Operator is every comparison the lexer knows, longest first as it tries them. */
export type Operator = "!=" | "!~" | "<=" | ">=" | "=" | "~" | "<" | ">" | "@";
/** EqOp is equality and its complement. */
export type EqOp = "=" | "!=";
/** MatchOp adds substring/glob `~` and its complement `!~`. */
export type MatchOp = "=" | "!=" | "~" | "!~";
/** TextOp adds full-text `@` for action and message. */
export type TextOp = MatchOp | "@";
/** RangeOp orders numbers and instants. */
export type RangeOp = "<" | ">" | "<=" | ">=";
/** TimeOp is every comparison of a timestamp. */
export type TimeOp = RangeOp | EqOp;

/** ObjectFacet names the four free-form objects of an entry. */
export type ObjectFacet = "actor" | "target" | "context" | "metadata";
/** OBJECT_FACETS lists the object facets, the roots of field paths. */
export const OBJECT_FACETS: readonly ObjectFacet[] = ["actor", "target", "context", "metadata"];

/** StringValue is a bare or quoted value, unescaped. */
export interface StringValue {
  kind: "string";
  text: string;
  pos: number;
}
/** NullValue is the unquoted literal `null`; only `=`/`!=` on facets with null checks carry it. */
export interface NullValue {
  kind: "null";
  pos: number;
}
/** TimeValue is an RFC 3339 value as written plus its instant at full precision. */
export interface TimeValue {
  kind: "time";
  text: string;
  instant: Instant;
  pos: number;
}
/** NumberValue is a JSON-number value as written plus its numeric value, for ranges on object fields. */
export interface NumberValue {
  kind: "number";
  text: string;
  number: number;
  pos: number;
}
/** Value is one member of a facet term's group. */
export type Value = StringValue | NullValue | TimeValue | NumberValue;

/** IdTerm compares the entry id with UUIDs: `id=…`, `id!=…`. */
export interface IdTerm {
  kind: "id";
  op: EqOp;
  values: StringValue[];
  pos: number;
}
/** EnumTerm compares level or environment exactly. */
export interface EnumTerm {
  kind: "enum";
  facet: "level" | "environment";
  op: EqOp;
  values: StringValue[];
  pos: number;
}
/** TextTerm compares action or message: equality, substring/glob, full text, null checks. */
export interface TextTerm {
  kind: "text";
  facet: "action" | "message";
  op: TextOp;
  values: (StringValue | NullValue)[];
  pos: number;
}
/** TagTerm compares any of the entry's tags (the facet `tags` is the same). */
export interface TagTerm {
  kind: "tag";
  op: MatchOp;
  values: (StringValue | NullValue)[];
  pos: number;
}
/** TimeTerm compares a timestamp; `timestamp` is canonicalised to `server_timestamp`. */
export interface TimeTerm {
  kind: "time";
  facet: "server_timestamp" | "client_timestamp";
  op: TimeOp;
  values: TimeValue[];
  pos: number;
}
/** ObjectNullTerm checks a whole object for null: `actor=null`, `metadata!=null`. */
export interface ObjectNullTerm {
  kind: "object-null";
  facet: ObjectFacet;
  op: EqOp;
  values: NullValue[];
  pos: number;
}
/** PathTerm compares a field inside an object by its text form: `metadata.http.status=500`. */
export interface PathTerm {
  kind: "path";
  facet: ObjectFacet;
  path: string[];
  op: MatchOp;
  values: (StringValue | NullValue)[];
  pos: number;
}
/** RangeTerm compares a number-valued field inside an object: `metadata.ms>=250`. */
export interface RangeTerm {
  kind: "range";
  facet: ObjectFacet;
  path: string[];
  op: RangeOp;
  values: NumberValue[];
  pos: number;
}
/** FreeTerm is a free word or quoted free phrase; `words` are its full-text words. */
export interface FreeTerm {
  kind: "free";
  text: string;
  words: string[];
  pos: number;
}

/**
 * LiteralTerm is a plain case-insensitive substring of action or message, `*` included: the
 * `action`/`message` filters of GET /logs and the body `action` of POST /logs/query. The query
 * language cannot write it; it is built by the read endpoints.
 */
export interface LiteralTerm {
  kind: "literal";
  facet: "action" | "message";
  text: string;
  pos: number;
}

/** FacetTerm is every term of the form `<facet><op><value>`. */
export type FacetTerm = IdTerm | EnumTerm | TextTerm | TagTerm | TimeTerm | ObjectNullTerm | PathTerm | RangeTerm;
/** Term is one ANDed part of a query. */
export type Term = FacetTerm | FreeTerm | LiteralTerm;

/** Query is a parsed query: all terms ANDed; no terms matches everything. */
export interface Query {
  terms: Term[];
}

/** facetName is the canonical name of a facet term's facet, as the printer writes it. */
export function facetName(term: FacetTerm): string {
  switch (term.kind) {
    case "id":
      return "id";
    case "tag":
      return "tag";
    case "path":
    case "range":
      return [term.facet, ...term.path].join(".");
    default:
      return term.facet;
  }
}
