// lexer: one row per splitting and quoting rule of contract §6 fine print; raw terms keep positions.
import { describe, expect, test } from "bun:test";
import type { Operator } from "../../../src/query/ast.ts";
import { findOperator, lex, operatorAt } from "../../../src/query/lexer.ts";
import { caught, expectFault } from "./support.ts";

type M = [pos: number, text: string, quoted?: boolean];
const free = (pos: number, text: string, quoted = false) => ({ kind: "free", pos, text, quoted });
const facet = (pos: number, name: string, op: string, opPos: number, ...members: M[]) => ({
  kind: "facet",
  pos,
  facet: name,
  op,
  opPos,
  members: members.map(([p, text, quoted = false]) => ({ pos: p, text, quoted })),
});

describe("lex: terms", () => {
  const rows: [string, string, object[]][] = [
    ["a query is a space-separated list of terms", "level=error boom", [facet(0, "level", "=", 5, [6, "error"]), free(12, "boom")]],
    ["a term without an operator is a free word", "timeout", [free(0, "timeout")]],
    ["only the space character separates terms: a tab is part of the word", "a\tb c", [free(0, "a\tb"), free(4, "c")]],
    ["only the space character separates terms: a newline is part of the word", "a\nb", [free(0, "a\nb")]],
    ["runs of spaces count as one", "  a    b  ", [free(2, "a"), free(7, "b")]],
    ["a query of only spaces has no terms", "     ", []],
    ["the empty query has no terms", "", []],
    ["the first operator in a term ends its facet name", "message=a=b~c", [facet(0, "message", "=", 7, [8, "a=b~c"])]],
    ["longest operator first: != before =", "level!=error", [facet(0, "level", "!=", 5, [7, "error"])]],
    ["longest operator first: !~ before ~", "message!~x", [facet(0, "message", "!~", 7, [9, "x"])]],
    ["longest operator first: <= before <", "timestamp<=t", [facet(0, "timestamp", "<=", 9, [11, "t"])]],
    ["longest operator first: >= before >", "timestamp>=t", [facet(0, "timestamp", ">=", 9, [11, "t"])]],
    [
      "single operators = ~ < > @ are operators",
      "a~x b<1 c>2 d@w",
      [facet(0, "a", "~", 1, [2, "x"]), facet(4, "b", "<", 5, [6, "1"]), facet(8, "c", ">", 9, [10, "2"]), facet(12, "d", "@", 13, [14, "w"])],
    ],
    ["! alone is no operator", "a!b", [free(0, "a!b")]],
    ["! alone before another operator belongs to the facet name", "a!<1", [facet(0, "a!", "<", 2, [3, "1"])]],
    ["a bare word holding an operator character is a facet expression", "user@example.com", [facet(0, "user", "@", 4, [5, "example.com"])]],
    ["a quoted free term may hold operator characters", '"user@example.com"', [free(0, "user@example.com", true)]],
    ["a quoted free phrase may hold spaces", '"disk full" x', [free(0, "disk full", true), free(12, "x")]],
    ["a bare value runs up to the next space", 'message=a"b c', [facet(0, "message", "=", 7, [8, 'a"b']), free(12, "c")]],
    ["a quoted value may hold spaces", 'message="a b"', [facet(0, "message", "=", 7, [8, "a b", true])]],
    ["a bare group is split at commas", "level=error,warn,info", [facet(0, "level", "=", 5, [6, "error"], [12, "warn"], [17, "info"])]],
    ["each group member may be quoted", 'tag="a b",c,"d,e"', [facet(0, "tag", "=", 3, [4, "a b", true], [10, "c"], [12, "d,e", true])]],
    ["a quote opens only at the start of a value", 'message=x"y"', [facet(0, "message", "=", 7, [8, 'x"y"'])]],
    ["a quote inside a bare free word is an ordinary character", 'ab"c', [free(0, 'ab"c')]],
    ["a quote inside a facet name is an ordinary character", 'me"ta=1', [facet(0, 'me"ta', "=", 5, [6, "1"])]],
    ["a quote opens at the start of a group member", 'tag=a,"b c"', [facet(0, "tag", "=", 3, [4, "a"], [6, "b c", true])]],
    ['inside quotes \\" is a quote', 'message="say \\"hi\\""', [facet(0, "message", "=", 7, [8, 'say "hi"', true])]],
    ["inside quotes \\\\ is a backslash", '"a\\\\b"', [free(0, "a\\b", true)]],
    ["inside quotes any other backslash is literal", '"a\\nb\\x"', [free(0, "a\\nb\\x", true)]],
    ["outside quotes a backslash is literal", "a\\b", [free(0, "a\\b")]],
    ["after a closing quote a space may follow", '"a" b', [free(0, "a", true), free(4, "b")]],
    ["after a closing quote the end may follow", 'tag="a"', [facet(0, "tag", "=", 3, [4, "a", true])]],
    ["after a closing quote in a group a comma may follow", 'tag="a",b', [facet(0, "tag", "=", 3, [4, "a", true], [8, "b"])]],
    ["groups exist only in facet values: a free word a,b is one term", "a,b", [free(0, "a,b")]],
    ["null is lexed as a bare member; the parser gives it meaning", 'tag=null,"null"', [facet(0, "tag", "=", 3, [4, "null"], [9, "null", true])]],
    ["positions count UTF-16 code units", "😀 x", [free(0, "😀"), free(3, "x")]],
  ];
  for (const [rule, query, terms] of rows) {
    test(rule, () => expect(lex(query)).toMatchObject(terms));
  }
});

describe("lex: syntax faults are VALIDATION_QUERY_SYNTAX at their position, first from the left", () => {
  const rows: [string, string, number][] = [
    ["unterminated quote of a value points at the opening quote", 'level=error message="abc', 20],
    ["unterminated quote of a free phrase points at the opening quote", 'x "abc', 2],
    ["a trailing escaped quote leaves the quote unterminated", '"abc\\"', 0],
    ["empty value after the operator", "level= x", 6],
    ["empty value at the end of the query", "level=", 6],
    ['"" is an empty value', 'message=""', 8],
    ['"" as a free term is an empty value', 'a ""', 2],
    ["empty group member between commas", "level=error,,warn", 12],
    ["empty group member after a trailing comma", "level=error, x", 12],
    ["empty group member before a leading comma", "level=,error", 6],
    ['"" as a group member is an empty group member', 'tag=a,""', 6],
    ["operator with no facet", "=error", 0],
    ["operator with no facet after spaces", "x  !=error", 3],
    ["spaces around the operator leave it with no facet", "level = error", 6],
    ["a character after a closing quote", 'message="a"b', 11],
    ["a comma after a closing free phrase (no groups outside facet values)", '"a",b', 3],
    ["a quote right after a closing quote", '"a""b"', 3],
    ["a term that starts with a quote is a free phrase: an operator after it is a fault", '"level"=error', 7],
    ["the leftmost syntax fault is reported", '=x level= "abc', 0],
  ];
  for (const [rule, query, position] of rows) {
    test(rule, () =>
      expectFault(
        caught(() => lex(query)),
        "VALIDATION_QUERY_SYNTAX",
        position,
      ),
    );
  }
  test("the unterminated-quote message says how to fix it", () => {
    expect(caught(() => lex('message="abc')).message).toBe('cannot parse query at position 8: unterminated quote; close it with "');
  });
});

describe("operatorAt and findOperator", () => {
  const rows: [string, string, number, Operator | null][] = [
    ["!= is one operator", "a!=b", 1, "!="],
    ["!~ is one operator", "a!~b", 1, "!~"],
    ["! followed by another character is none", "a!b", 1, null],
    ["<= is one operator", "a<=b", 1, "<="],
    ["> alone is an operator", "a>b", 1, ">"],
    ["a letter is none", "ab", 0, null],
  ];
  for (const [rule, text, at, op] of rows) test(`operatorAt: ${rule}`, () => expect(operatorAt(text, at)).toBe(op));
  test("findOperator finds the first operator of a word", () => expect(findOperator("a!b@c=d")).toBe(3));
  test("findOperator is -1 for a word without operators", () => expect(findOperator("a!b,c")).toBe(-1));
});
