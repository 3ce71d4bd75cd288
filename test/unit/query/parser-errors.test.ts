// parser errors: every fault of contract §6 gives its code and details.position, and the first
// fault in the contract's order is the one reported.
import { describe, expect, test } from "bun:test";
import { parseQuery } from "../../../src/query/parser.ts";
import { caught, expectFault, type QueryCode } from "./support.ts";

const UUID = "0192f3a4-5b6c-7d8e-9f01-23456789abcd";
const T = "2026-11-22T10:00:00Z";
const SYNTAX = "VALIDATION_QUERY_SYNTAX";
const INVALID = "VALIDATION_QUERY_INVALID";
const TIME = "VALIDATION_QUERY_TIME_RANGE";
const CONSTRAINT = "VALIDATION_QUERY_CONSTRAINT";
const terms = (n: number, t = "x") => Array(n).fill(t).join(" ");

type Row = [rule: string, query: string, code: QueryCode, position: number];

function table(title: string, rows: Row[]): void {
  describe(title, () => {
    for (const [rule, query, code, position] of rows) {
      test(rule, () =>
        expectFault(
          caught(() => parseQuery(query)),
          code,
          position,
        ),
      );
    }
  });
}

table("VALIDATION_QUERY_SYNTAX", [
  ["unterminated quote", 'level=error message="disk', SYNTAX, 20],
  ["empty value", "level=", SYNTAX, 6],
  ["empty group member", "level=error,,warn", SYNTAX, 12],
  ["operator with no facet", "x =error", SYNTAX, 2],
  ["after a closing quote only a space, the end or (in a group) a comma may follow", 'tag="a"b', SYNTAX, 7],
  ['"" is an empty value', 'tag=""', SYNTAX, 4],
  ["no spaces around the operator: level = error is an operator with no facet", "level = error", SYNTAX, 6],
]);

table("VALIDATION_QUERY_INVALID", [
  ["unknown facet", "level=error host=web1", INVALID, 12],
  ["a bare word with an operator character is a facet expression: user@example.com is the unknown facet user", "user@example.com", INVALID, 0],
  ["facet names are case-sensitive", "Level=error", INVALID, 0],
  ["the object facets are case-sensitive too", "Metadata.k=1", INVALID, 0],
  ["an empty path segment is invalid", "metadata..x=1", INVALID, 0],
  ["a trailing dot is an empty path segment", "metadata.=1", INVALID, 0],
  ["a path needs an object facet at its root", "level.x=1", INVALID, 0],
  ["names of built-in object properties are unknown facets", "x constructor=1", INVALID, 2],
  ["operator not allowed for id", `id~${UUID}`, INVALID, 2],
  ["operator not allowed for level", "level~err", INVALID, 5],
  ["operator not allowed for environment", "environment<production", INVALID, 11],
  ["operator not allowed for action", "action<b", INVALID, 6],
  ["@ is not allowed for tag", "tag@a", INVALID, 3],
  ["operator not allowed for timestamps", `timestamp~${T}`, INVALID, 9],
  ["operator not allowed for a whole object", "actor~x", INVALID, 5],
  ["@ is not allowed on an object field", "metadata.k@x", INVALID, 10],
  ["non-UUID for id", "id=123", INVALID, 3],
  ["a UUID without dashes is not a UUID", `id=${UUID.replaceAll("-", "")}`, INVALID, 3],
  ["unknown level value", "level=critical", INVALID, 6],
  ["level values are case-sensitive", "level=ERROR", INVALID, 6],
  ["unknown environment value", "environment=prod", INVALID, 12],
  ["an unknown value inside a group points at that member", "level=error,warning", INVALID, 12],
  ["a whole object compares only with null", "actor=bob", INVALID, 6],
  ["null is not allowed with ~ (message~null)", "message~null", INVALID, 8],
  ["null is not allowed with @", "message@null", INVALID, 8],
  ["null is not allowed with !~ on tags", "tag!~null", INVALID, 5],
  ["null is not allowed for id (id=null)", "id=null", INVALID, 3],
  ["null is not allowed for timestamps (timestamp=null)", "timestamp=null", INVALID, 10],
  ["null is not allowed for level", "level=null", INVALID, 6],
  ["null is not allowed with ~ on an object field", "metadata.k~null", INVALID, 11],
  ["null is not allowed with a range on an object field", "metadata.k<null", INVALID, 11],
  ["a range on an object field needs a number value", "metadata.k>abc", INVALID, 11],
  ["a range number follows the JSON grammar: no leading zero", "metadata.k>=05", INVALID, 12],
  ["a range number follows the JSON grammar: no bare leading dot", "metadata.k<.5", INVALID, 11],
  ["a range number follows the JSON grammar: no plus sign", "metadata.k<+5", INVALID, 11],
  ["a range number follows the JSON grammar: no hex", "metadata.k<0x10", INVALID, 11],
]);

table("VALIDATION_QUERY_TIME_RANGE", [
  ["a timestamp value must be RFC 3339", "timestamp>yesterday", TIME, 10],
  ["a date alone is not a date-time", "timestamp>2026-11-22", TIME, 10],
  ["a date-time without an offset is not RFC 3339", "client_timestamp>=2026-11-22T10:00:00", TIME, 18],
  ["a space for T is not RFC 3339", 'server_timestamp<"2026-11-22 10:00:00Z"', TIME, 17],
  ["an impossible calendar date is not RFC 3339", "timestamp=2026-02-30T10:00:00Z", TIME, 10],
  ["each group member is checked", `timestamp=${T},nope`, TIME, 31],
]);

table("VALIDATION_QUERY_CONSTRAINT", [
  ["a query over 2,000 characters", "x".repeat(2001), CONSTRAINT, 2000],
  ["length counts UTF-16 code units", `"${"😀".repeat(1000)}"`, CONSTRAINT, 2000],
  ["over 20 terms points at the 21st", terms(21), CONSTRAINT, 40],
  ["free words count as terms", `level=error ${terms(20, "w")}`, CONSTRAINT, 12 + 19 * 2],
  ["over 100 values in one group points at the 101st", `tag=${Array(101).fill("a").join(",")}`, CONSTRAINT, 204],
  ["values of all groups count together", `tag=${Array(60).fill("a").join(",")} level=${Array(41).fill("info").join(",")}`, CONSTRAINT, 124 + 6 + 200],
  ["single values count too", `tag=${Array(100).fill("a").join(",")} level=info`, CONSTRAINT, 210],
]);

table("the first fault in the contract's order is reported", [
  ["length before syntax", `"${"x".repeat(2001)}`, CONSTRAINT, 2000],
  ["syntax before term count", `${terms(25)} "open`, SYNTAX, 50],
  ["syntax faults left to right", 'a= "open', SYNTAX, 2],
  ["syntax before facet: a later syntax fault beats an earlier unknown facet", "host=web =x", SYNTAX, 9],
  ["term count before value count", `${terms(20, `tag=${Array(6).fill("a").join(",")}`)} x`, CONSTRAINT, 20 * 16],
  ["value count before facet", `host=a tag=${Array(100).fill("a").join(",")}`, CONSTRAINT, 11 + 99 * 2],
  ["per term left to right: a bad value of the first term beats an unknown facet of the second", "level=ERROR host=web", INVALID, 6],
  ["a time value before a later unknown facet", "timestamp>soon host=web", TIME, 10],
  ["within a term, facet before operator", "host~null", INVALID, 0],
  ["within a term, operator before value", "level~ERROR", INVALID, 5],
  ["within a term, operator before a bad timestamp value", "timestamp~soon", INVALID, 9],
  ["within a group, values left to right", "level=error,BAD,WORSE", INVALID, 12],
]);

test("messages say how to fix the query", () => {
  expect(caught(() => parseQuery("user@example.com")).message).toContain('quote it: "user@example.com"');
  expect(caught(() => parseQuery("Level=error")).message).toContain("write level");
  expect(caught(() => parseQuery("level=ERROR")).message).toContain("use one of trace, debug, info, warn, error, fatal");
  expect(caught(() => parseQuery("message~null")).message).toContain('message~"null"');
});
