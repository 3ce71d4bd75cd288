// parser: one row per rule of contract §6 (bullets, facet table and fine print) that decides the AST.
import { describe, expect, test } from "bun:test";
import { parseQuery } from "../../../src/query/parser.ts";

const s = (text: string) => ({ kind: "string", text });
const NULL = { kind: "null" };
const UUID = "0192f3a4-5b6c-7d8e-9f01-23456789abcd";
const T = "2026-11-22T10:00:00Z";
const T_MS = Date.UTC(2026, 10, 22, 10);

describe("parseQuery: accepted queries give the typed AST", () => {
  const rows: [string, string, object[]][] = [
    // the shape of a query
    [
      "terms are space-separated and all kept (ANDed)",
      "level=error timeout",
      [
        { kind: "enum", facet: "level", op: "=", values: [s("error")] },
        { kind: "free", text: "timeout", words: ["timeout"] },
      ],
    ],
    ["the empty query has zero terms (matches everything)", "", []],
    ["a query of only spaces has zero terms", "    ", []],
    // values
    [
      "a bare value runs up to the next space",
      "message=disk full",
      [
        { kind: "text", values: [s("disk")] },
        { kind: "free", text: "full" },
      ],
    ],
    ['a quoted value holds spaces and unescapes \\" and \\\\', 'message="a \\"b\\" \\\\c"', [{ kind: "text", values: [s('a "b" \\c')] }]],
    ["a,b,c bare is a group", "level=error,warn,fatal", [{ kind: "enum", values: [s("error"), s("warn"), s("fatal")] }]],
    ["each group member may be quoted", 'tag="a b",c', [{ kind: "tag", values: [s("a b"), s("c")] }]],
    ["null unquoted is the null literal", "message=null", [{ kind: "text", op: "=", values: [NULL] }]],
    ['"null" quoted is the string', 'message="null"', [{ kind: "text", op: "=", values: [s("null")] }]],
    ["NULL in capitals is a string, not the literal", "message=NULL", [{ kind: "text", values: [s("NULL")] }]],
    ["null may be one member of a group", "message=null,x", [{ kind: "text", values: [NULL, s("x")] }]],
    // the facet table
    [
      "id takes = and != with a UUID",
      `id=${UUID} id!=${UUID}`,
      [
        { kind: "id", op: "=", values: [s(UUID)] },
        { kind: "id", op: "!=" },
      ],
    ],
    [
      "level takes = and != with a level",
      "level=error level!=debug",
      [
        { kind: "enum", facet: "level", op: "=" },
        { kind: "enum", facet: "level", op: "!=" },
      ],
    ],
    ["environment takes = and != with an environment", "environment=staging", [{ kind: "enum", facet: "environment", values: [s("staging")] }]],
    [
      "action takes = != ~ !~ @",
      "action=a action!=b action~c action!~d action@e",
      ["=", "!=", "~", "!~", "@"].map((op) => ({ kind: "text", facet: "action", op })),
    ],
    [
      "message takes = != ~ !~ @",
      "message=a message!=b message~c message!~d message@e",
      ["=", "!=", "~", "!~", "@"].map((op) => ({ kind: "text", facet: "message", op })),
    ],
    [
      "action and message have null checks",
      "message=null action!=null",
      [
        { kind: "text", facet: "message", op: "=", values: [NULL] },
        { kind: "text", facet: "action", op: "!=", values: [NULL] },
      ],
    ],
    ["tag takes = != ~ !~", "tag=a tag!=b tag~c tag!~d", ["=", "!=", "~", "!~"].map((op) => ({ kind: "tag", op }))],
    ["tags is an alias of tag", "tags=a", [{ kind: "tag", op: "=", values: [s("a")] }]],
    [
      "tag=null (no tags) and tag!=null (some tag) are null checks",
      "tag=null tag!=null",
      [
        { kind: "tag", op: "=", values: [NULL] },
        { kind: "tag", op: "!=", values: [NULL] },
      ],
    ],
    [
      "timestamp is server_timestamp",
      `timestamp>${T}`,
      [{ kind: "time", facet: "server_timestamp", op: ">", values: [{ kind: "time", text: T, instant: { ms: T_MS, subNs: 0 } }] }],
    ],
    [
      "server_timestamp and client_timestamp take < > <= >= = !=",
      `server_timestamp<${T} client_timestamp<=${T} server_timestamp>=${T} client_timestamp=${T} client_timestamp!=${T}`,
      [
        ["server_timestamp", "<"],
        ["client_timestamp", "<="],
        ["server_timestamp", ">="],
        ["client_timestamp", "="],
        ["client_timestamp", "!="],
      ].map(([facet, op]) => ({ kind: "time", facet, op })),
    ],
    [
      "actor, target, context, metadata take =null and !=null",
      "actor=null target!=null context=null metadata!=null",
      [
        ["actor", "="],
        ["target", "!="],
        ["context", "="],
        ["metadata", "!="],
      ].map(([facet, op]) => ({ kind: "object-null", facet, op, values: [NULL] })),
    ],
    [
      "actor.<path> takes = != ~ !~ with text",
      "actor.id=1 target.t!=x context.c~y metadata.m!~z",
      [
        ["actor", "=", "id"],
        ["target", "!=", "t"],
        ["context", "~", "c"],
        ["metadata", "!~", "m"],
      ].map(([facet, op, key]) => ({ kind: "path", facet, op, path: [key] })),
    ],
    [
      "object paths have null checks",
      "metadata.k=null metadata.k!=null",
      [
        { kind: "path", op: "=", values: [NULL] },
        { kind: "path", op: "!=", values: [NULL] },
      ],
    ],
    [
      "object paths take < > <= >= with a number",
      "metadata.ms<1 metadata.ms>2 metadata.ms<=3 metadata.ms>=4",
      [
        ["<", 1],
        [">", 2],
        ["<=", 3],
        [">=", 4],
      ].map(([op, n]) => ({ kind: "range", facet: "metadata", path: ["ms"], op, values: [{ kind: "number", number: n }] })),
    ],
    // fine print
    ["the first operator ends the facet name; the rest is the value", "message=a=b", [{ kind: "text", op: "=", values: [s("a=b")] }]],
    ["! alone is no operator: a!b is a free word", "a!b", [{ kind: "free", text: "a!b", words: ["a", "b"] }]],
    ['text with "@" is searched quoted', '"user@example.com"', [{ kind: "free", text: "user@example.com", words: ["user", "example", "com"] }]],
    ["object keys are case-sensitive and kept as written", "metadata.Status=1", [{ kind: "path", path: ["Status"] }]],
    ["every dot nests one level", "metadata.a.b.c=1", [{ kind: "path", facet: "metadata", path: ["a", "b", "c"] }]],
    ["a quote inside a bare value is an ordinary character", 'message=a"b', [{ kind: "text", values: [s('a"b')] }]],
    ["inside quotes any other backslash is literal", '"a\\nb"', [{ kind: "free", text: "a\\nb", words: ["a", "nb"] }]],
    ["groups exist only in facet values: a free word a,b is the two words a and b", "a,b", [{ kind: "free", text: "a,b", words: ["a", "b"] }]],
    ["free words are lowercased full-text words", "Disk-FULL", [{ kind: "free", words: ["disk", "full"] }]],
    ["a free phrase with no words is a term with no words", '"!!"', [{ kind: "free", text: "!!", words: [] }]],
    [
      "a range value may be quoted; it is still a number",
      'metadata.ms>"2.5e3"',
      [{ kind: "range", values: [{ kind: "number", text: "2.5e3", number: 2500 }] }],
    ],
    ["a range value follows the JSON number grammar: negative, fraction, exponent", "metadata.x>-0.5E+2", [{ kind: "range", values: [{ number: -50 }] }]],
    ["= on an object field takes any text, numbers included", "metadata.status_code=500", [{ kind: "path", op: "=", values: [s("500")] }]],
    ["an upper-case UUID is a valid id value", `id=${UUID.toUpperCase()}`, [{ kind: "id", values: [s(UUID.toUpperCase())] }]],
    [
      "environment= may name any environment, not just the key's",
      "environment=development",
      [{ kind: "enum", facet: "environment", values: [s("development")] }],
    ],
    [
      "timestamp values keep sub-millisecond digits",
      "timestamp=2026-11-22T10:00:00.000000001Z",
      [{ kind: "time", values: [{ instant: { ms: T_MS, subNs: 1 } }] }],
    ],
    ["timestamp values convert their offset to UTC", "timestamp=2026-11-22T11:00:00+01:00", [{ kind: "time", values: [{ instant: { ms: T_MS, subNs: 0 } }] }]],
    ["timestamp values may be quoted", `timestamp="${T}"`, [{ kind: "time", values: [{ text: T }] }]],
    ["exactly 20 terms are allowed", Array(20).fill("x").join(" "), Array(20).fill({ kind: "free" })],
    ["exactly 100 values are allowed", `tag=${Array(100).fill("a").join(",")}`, [{ kind: "tag" }]],
    ["free words are terms but not values", `tag=${Array(100).fill("a").join(",")} w1 w2`, [{ kind: "tag" }, { kind: "free" }, { kind: "free" }]],
    ["exactly 2,000 UTF-16 code units are allowed", `"${"😀".repeat(999)}"`, [{ kind: "free" }]],
  ];
  for (const [rule, query, terms] of rows) {
    test(rule, () => expect(parseQuery(query).terms).toMatchObject(terms));
  }
});

describe("parseQuery: positions of terms and values", () => {
  test("each term and value keeps its 0-based offset", () => {
    const q = parseQuery('  level=error,"warn" "x y"');
    expect(q.terms).toMatchObject([
      { kind: "enum", pos: 2, values: [{ pos: 8 }, { pos: 14 }] },
      { kind: "free", pos: 21 },
    ]);
  });
});
