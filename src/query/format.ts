// format: the canonical printer of a query AST. Printing what parseQuery returns and parsing it
// again gives the same AST (positions aside), and printing that gives the same text.
import { facetName, type Query, type Term, type Value } from "./ast.ts";
import { findOperator } from "./lexer.ts";

/** formatQuery prints a query in canonical form: terms joined by one space, no spaces for an empty query. */
export function formatQuery(q: Query): string {
  return q.terms.map(formatTerm).join(" ");
}

/** formatTerm prints one term: canonical facet name, operator, values joined by commas; or the free text. */
export function formatTerm(t: Term): string {
  if (t.kind === "free") return bareFree(t.text) ? t.text : quote(t.text);
  if (t.kind === "literal") return `${t.facet} contains ${quote(t.text)}`; // no query-language form: shown by explain only
  return facetName(t) + t.op + t.values.map(formatValue).join(",");
}

/** formatValue prints a value bare when it reads back the same, quoted otherwise; null as the literal. */
export function formatValue(v: Value): string {
  if (v.kind === "null") return "null";
  return bareValue(v.text) ? v.text : quote(v.text);
}

// a bare value ends at a space or comma, opens a quote when it starts with one, and `null` would be the literal
const bareValue = (s: string): boolean => s !== "" && s !== "null" && s[0] !== '"' && !s.includes(" ") && !s.includes(",");

// a bare free word must not open a quote, hold a space, or hold an operator (that makes it a facet expression)
const bareFree = (s: string): boolean => s !== "" && s[0] !== '"' && !s.includes(" ") && findOperator(s) < 0;

const quote = (s: string): string => `"${s.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`;
