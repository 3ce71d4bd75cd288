// format: the canonical printer. A table of canonical forms, then round trips over generated ASTs.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { formatQuery } from "../../../src/query/format.ts";
import { parseQuery } from "../../../src/query/parser.ts";
import { query } from "./arbitrary.ts";
import { stripPositions } from "./support.ts";

const canonical = (q: string) => formatQuery(parseQuery(q));

describe("formatQuery: canonical forms", () => {
  const rows: [string, string, string][] = [
    ["the empty query prints as nothing", "   ", ""],
    ["runs of spaces become one space", "  level=error    disk  ", "level=error disk"],
    ["tags prints as tag", "tags=a", "tag=a"],
    ["timestamp prints as server_timestamp", "timestamp>2026-11-22T10:00:00Z", "server_timestamp>2026-11-22T10:00:00Z"],
    [
      "timestamp values print as written, offset and digits kept",
      "client_timestamp<=2026-11-22T10:00:00.000100+01:00",
      "client_timestamp<=2026-11-22T10:00:00.000100+01:00",
    ],
    ["quotes are dropped where a bare value reads the same", 'message="abc" level="error"', "message=abc level=error"],
    ["a value with a space stays quoted", 'message="a b"', 'message="a b"'],
    ["a value with a comma stays quoted", 'tag="a,b"', 'tag="a,b"'],
    ['the string "null" stays quoted; the literal does not', 'message=null,"null"', 'message=null,"null"'],
    ["a value starting with a quote is quoted and escaped", 'message="\\"x"', 'message="\\"x"'],
    ["a quote inside a bare value stays bare", 'message=a"b', 'message=a"b'],
    ["backslashes are escaped only inside quotes", 'message="a\\\\b c" tag=a\\b', 'message="a\\\\b c" tag=a\\b'],
    ["operator characters in a value stay bare", "message=a=b", "message=a=b"],
    ["a free phrase without operators or spaces prints bare", '"hello"', "hello"],
    ["a free phrase with an operator stays quoted", '"user@example.com"', '"user@example.com"'],
    ["a free phrase with a space stays quoted", '"disk full"', '"disk full"'],
    ["a free word a,b stays one bare term", "a,b", "a,b"],
    ["a free word with ! alone stays bare", "a!b", "a!b"],
    ["a quoted range number prints bare", 'metadata.ms>"2.5"', "metadata.ms>2.5"],
    ["group members are joined by commas", 'level=error,"warn"', "level=error,warn"],
    ["paths print dotted", "actor.a.b!~x", "actor.a.b!~x"],
    ["null checks print as written", "actor=null tag!=null", "actor=null tag!=null"],
  ];
  for (const [rule, input, printed] of rows) {
    test(rule, () => expect(canonical(input)).toBe(printed));
  }
  test("every canonical form of the table is a fixed point", () => {
    for (const [, input] of rows) expect(canonical(canonical(input))).toBe(canonical(input));
  });
});

describe("formatQuery: round trips over generated ASTs", () => {
  test("parseQuery(formatQuery(ast)) equals ast, positions aside", () => {
    fc.assert(
      fc.property(query, (ast) => {
        expect(stripPositions(parseQuery(formatQuery(ast)))).toEqual(stripPositions(ast));
      }),
      { numRuns: 1500 },
    );
  });
  test("the printed form of a parsed query is stable", () => {
    fc.assert(
      fc.property(query, (ast) => {
        const once = canonical(formatQuery(ast));
        expect(canonical(once)).toBe(once);
      }),
      { numRuns: 1000 },
    );
  });
});
