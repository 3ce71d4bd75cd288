// lexer: splits query text into raw terms (contract §6 fine print). It knows quoting, groups and
// operators, nothing of facets; every fault it finds is VALIDATION_QUERY_SYNTAX, the first from the left.
import { badRequest, type ApiError } from "../errors.ts";
import type { Operator } from "./ast.ts";

/** RawMember is one value of a facet expression (a group has several), unescaped if it was quoted. */
export interface RawMember {
  text: string;
  quoted: boolean;
  pos: number;
}

/** RawFacetTerm is `<facet><op><value>[,<value>…]` before any facet, operator or value check. */
export interface RawFacetTerm {
  kind: "facet";
  pos: number;
  end: number;
  facet: string;
  op: Operator;
  opPos: number;
  members: RawMember[];
}

/** RawFreeTerm is a free word or a quoted free phrase. */
export interface RawFreeTerm {
  kind: "free";
  pos: number;
  end: number;
  text: string;
  quoted: boolean;
}

/** RawTerm is one space-separated term as the lexer found it. */
export type RawTerm = RawFacetTerm | RawFreeTerm;

/** lex splits a query into raw terms, or throws the first syntax fault from the left. */
export function lex(text: string): RawTerm[] {
  const terms: RawTerm[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === " ") {
      i++; // only the space character separates terms; runs of them count as one
      continue;
    }
    const term = text[i] === '"' ? quotedFree(text, i) : bareTerm(text, i);
    terms.push(term);
    i = term.end;
  }
  return terms;
}

/** operatorAt is the operator starting at index i of text, longest first, or null; `!` alone is none. */
export function operatorAt(text: string, i: number): Operator | null {
  const c = text[i];
  const next = text[i + 1];
  if (c === "!") return next === "=" ? "!=" : next === "~" ? "!~" : null;
  if (c === "<") return next === "=" ? "<=" : "<";
  if (c === ">") return next === "=" ? ">=" : ">";
  if (c === "=" || c === "~" || c === "@") return c;
  return null;
}

/** findOperator is the index of the first operator in a word, or -1: the test for "is this bare word a facet expression". */
export function findOperator(word: string): number {
  for (let i = 0; i < word.length; i++) if (operatorAt(word, i)) return i;
  return -1;
}

function quotedFree(text: string, start: number): RawFreeTerm {
  const { value, end } = readQuoted(text, start);
  if (end < text.length && text[end] !== " ") {
    throw syntax(
      end,
      `${JSON.stringify(text[end])} after a closing quote`,
      'put a space after the closing quote (a free phrase takes no group; write \\" for a quote inside quotes)',
    );
  }
  if (value === "") throw syntax(start, 'empty value ""', "put words between the quotes or remove them");
  return { kind: "free", pos: start, end, text: value, quoted: true };
}

function bareTerm(text: string, start: number): RawTerm {
  let i = start;
  while (i < text.length && text[i] !== " ") {
    const op = operatorAt(text, i);
    if (op) return facetTerm(text, start, i, op);
    i++;
  }
  return { kind: "free", pos: start, end: i, text: text.slice(start, i), quoted: false };
}

function facetTerm(text: string, start: number, opPos: number, op: Operator): RawFacetTerm {
  if (opPos === start) {
    throw syntax(opPos, `operator ${op} with no facet`, `write a facet before it (e.g. message${op}…), or quote the text to search for it`);
  }
  const members: RawMember[] = [];
  let i = opPos + op.length;
  for (;;) {
    const inGroup = members.length > 0 || text[i] === ",";
    const member = text[i] === '"' ? quotedMember(text, i, inGroup) : bareMember(text, i, inGroup);
    members.push(member.raw);
    i = member.end;
    if (text[i] !== ",") break;
    i++;
  }
  return { kind: "facet", pos: start, end: i, facet: text.slice(start, opPos), op, opPos, members };
}

function quotedMember(text: string, start: number, inGroup: boolean): { raw: RawMember; end: number } {
  const { value, end } = readQuoted(text, start);
  if (end < text.length && text[end] !== " " && text[end] !== ",") {
    throw syntax(
      end,
      `${JSON.stringify(text[end])} after a closing quote`,
      'put a space or a comma after the closing quote (write \\" for a quote inside quotes)',
    );
  }
  if (value === "") throw empty(start, inGroup || text[end] === ",");
  return { raw: { text: value, quoted: true, pos: start }, end };
}

function bareMember(text: string, start: number, inGroup: boolean): { raw: RawMember; end: number } {
  let i = start;
  while (i < text.length && text[i] !== " " && text[i] !== ",") i++; // a `"` inside a bare word is ordinary
  if (i === start) throw empty(start, inGroup);
  return { raw: { text: text.slice(start, i), quoted: false, pos: start }, end: i };
}

// readQuoted reads from the opening quote at `start`; only \" and \\ are escapes, any other backslash is literal.
function readQuoted(text: string, start: number): { value: string; end: number } {
  let value = "";
  let i = start + 1;
  while (i < text.length) {
    const c = text[i];
    if (c === '"') return { value, end: i + 1 };
    if (c === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) {
      value += text[i + 1];
      i += 2;
    } else {
      value += c;
      i++;
    }
  }
  throw syntax(start, "unterminated quote", 'close it with "');
}

function empty(pos: number, inGroup: boolean): ApiError {
  return inGroup
    ? syntax(pos, "empty group member", "remove the extra comma or put a value between the commas")
    : syntax(pos, "empty value", 'write a value right after the operator (quote it if it has spaces: message="a b")');
}

function syntax(pos: number, what: string, fix: string): ApiError {
  return badRequest("VALIDATION_QUERY_SYNTAX", `cannot parse query at position ${pos}: ${what}; ${fix}`, { position: pos });
}
