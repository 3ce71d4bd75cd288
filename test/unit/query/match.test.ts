// match: one row per semantic rule of contract §6; each row names entries that match and entries that do not.
import { describe, expect, test } from "bun:test";
import { matchQuery, matchTerm } from "../../../src/query/match.ts";
import { parseQuery } from "../../../src/query/parser.ts";
import { ENV, ID, row, T0, type EntryFields } from "./support.ts";

const UPPER_ID = ID.toUpperCase();
const OTHER_ID = "0192f3a4-5b6c-7d8e-9f01-000000000000";
const iso = (ms: number) => new Date(ms).toISOString();

type Row = [rule: string, query: string, yes: EntryFields[], no: EntryFields[]];

const rows: Row[] = [
  // facets compared exactly
  ["id= compares the canonical lowercase UUID exactly", `id=${ID}`, [{ id: ID }], [{ id: OTHER_ID }]],
  ["id= with an upper-case UUID is valid and matches nothing", `id=${UPPER_ID}`, [], [{ id: ID }]],
  ["id!= with an upper-case UUID matches everything", `id!=${UPPER_ID}`, [{ id: ID }], []],
  ["level= is exact", "level=error", [{ level: "error" }], [{ level: "warn" }, { level: "fatal" }]],
  ["environment= naming the entry's environment matches", `environment=${ENV}`, [{}], []],
  ["environment= naming another environment is a plain filter that matches nothing", "environment=staging", [], [{}]],
  ["environment!= naming another environment matches everything", "environment!=staging", [{}], []],
  // action and message
  [
    "action= is case-insensitive equality, not substring",
    "action=USER.LOGIN",
    [{ action: "user.login" }, { action: "User.Login" }],
    [{ action: "user.login2" }],
  ],
  ["message= is case-insensitive equality", "message=Hello", [{ message: "HELLO" }], [{ message: "hello world" }, { message: null }]],
  ["case-insensitive means Unicode toLowerCase on both sides", "message=ÉCOLE", [{ message: "école" }, { message: "ÉcOlE" }], [{ message: "ecole" }]],
  ["message!= is the exact complement of =: a null message matches", "message!=hello", [{ message: "bye" }, { message: null }], [{ message: "HELLO" }]],
  ["message=null matches a null message", "message=null", [{ message: null }], [{ message: "null" }, { message: "" }]],
  ["message!=null matches a present message", "message!=null", [{ message: "" }, { message: "x" }], [{ message: null }]],
  ['message="null" is the string null', 'message="null"', [{ message: "null" }, { message: "NULL" }], [{ message: null }]],
  ["~ is a case-insensitive substring match", "action~LOGIN", [{ action: "user.login" }, { action: "Login_failed" }], [{ action: "logout" }]],
  ["!~ is the exact complement of ~: a null message matches", "message!~disk", [{ message: "ok" }, { message: null }], [{ message: "Disk full" }]],
  ["~ on a null message matches nothing", "message~e", [{ message: "e" }], [{ message: null }]],
  [
    "a value with * is a glob over the whole text: login* matches login and login_failed, not user.login",
    'action~"login*"',
    [{ action: "login" }, { action: "login_failed" }],
    [{ action: "user.login" }],
  ],
  ["the glob is case-insensitive", "action~LOGIN*", [{ action: "Login_Failed" }], []],
  [
    "* is any run of characters, also none, at any place",
    "action~a*b*c",
    [{ action: "abc" }, { action: "a-b-c" }, { action: "aXXbYYc" }],
    [{ action: "abcd" }, { action: "xabc" }, { action: "acb" }],
  ],
  ["a glob's fixed ends may not overlap", "action~ab*ba", [{ action: "abba" }, { action: "ab-ba" }], [{ action: "aba" }]],
  ["a glob's middle part may not overlap its end", "action~*ab*b", [{ action: "abb" }, { action: "xabyb" }], [{ action: "ab" }]],
  ["a lone * matches any present text", "message~*", [{ message: "" }, { message: "x" }], [{ message: null }]],
  ["in a glob only * is special", "action~a?b*", [{ action: "a?bc" }], [{ action: "axbc" }]],
  ["!~ with a glob is its complement", "action!~*.login", [{ action: "login" }], [{ action: "user.login" }]],
  // full text
  [
    "@ needs every word of the value among the words of the text",
    'message@"disk full"',
    [{ message: "Disk is FULL!" }, { message: "full disk" }],
    [{ message: "disk is ok" }, { message: "diskfull" }],
  ],
  [
    "words are maximal runs of Unicode letters and digits",
    "message@id",
    [{ message: "user_id=7" }, { message: "ID:7" }],
    [{ message: "userid" }, { message: "id7" }],
  ],
  ["words may be any script and digits", "message@größe42", [{ message: "GRÖßE42 ok" }], [{ message: "größe 42" }]],
  ["action@ searches the action only", "action@login", [{ action: "user.login", message: "x" }], [{ action: "x", message: "login" }]],
  [
    "message@ searches the message only; a null message has no words",
    "message@login",
    [{ message: "login" }],
    [{ action: "login", message: "x" }, { message: null }],
  ],
  ["a full-text value with no words adds no condition, also on a null message", 'message@"--"', [{ message: null }, { message: "x" }], []],
  ["a free word matches a word of the action", "login", [{ action: "user.login", message: "x" }], [{ action: "user.logout", message: "x" }]],
  [
    "a free word matches a word of the message",
    "disk",
    [{ action: "x", message: "Disk full" }],
    [
      { action: "x", message: "diskette" },
      { action: "x", message: null },
    ],
  ],
  [
    "a free phrase needs all its words in action, or all in message",
    '"disk full"',
    [
      { action: "disk.full", message: "x" },
      { action: "x", message: "full disk" },
    ],
    [{ action: "disk", message: "full" }],
  ],
  ["two free words are two terms: each may be in either field", "disk full", [{ action: "disk", message: "full" }], [{ action: "disk", message: "x" }]],
  ["a free word a,b is the two words a and b", "disk,full", [{ action: "x", message: "full-disk" }], [{ action: "x", message: "disk" }]],
  ["a free word with an escaped quote searches its words", '"user@example.com"', [{ message: "mail to USER@example.com" }], [{ message: "user@example.org" }]],
  ["a free term with no words adds no condition", '"!!"', [{ action: "x", message: null }], []],
  // tags
  [
    "tag= is exact and case-sensitive, against any of the tags",
    "tag=prod",
    [{ tags: ["web", "prod"] }],
    [{ tags: ["Prod"] }, { tags: ["production"] }, { tags: [] }],
  ],
  ["tag~ is a case-insensitive substring of any tag", "tag~PRO", [{ tags: ["x", "production"] }], [{ tags: ["staging"] }]],
  ["tag!= means no tag equals it", "tag!=prod", [{ tags: ["Prod"] }, { tags: [] }], [{ tags: ["web", "prod"] }]],
  ["tag=null means no tags", "tag=null", [{ tags: [] }], [{ tags: ["null"] }]],
  ["tag!=null means some tag", "tags!=null", [{ tags: ["a"] }], [{ tags: [] }]],
  // groups
  ["groups are OR", "level=error,warn", [{ level: "error" }, { level: "warn" }], [{ level: "info" }]],
  ["with != a group means none of them", "level!=error,warn", [{ level: "info" }], [{ level: "error" }, { level: "warn" }]],
  ["with !~ a group means none of them", "action!~login,logout", [{ action: "signup" }], [{ action: "user.login" }, { action: "logout" }]],
  ["a group may mix null and text", "message=null,ok", [{ message: null }, { message: "OK" }], [{ message: "no" }]],
  ["a group of @ values is OR", "message@disk,cpu", [{ message: "cpu hot" }, { message: "disk" }], [{ message: "ram" }]],
  // objects
  ["actor=null matches a null actor", "actor=null", [{ actor: null }], [{ actor: {} }]],
  ["metadata!=null matches any present object, also an empty one", "metadata!=null", [{ metadata: {} }], [{ metadata: null }]],
  [
    "= on an object field compares a string as is, case-sensitively",
    "actor.name=Bob",
    [{ actor: { name: "Bob" } }],
    [{ actor: { name: "bob" } }, { actor: { name: "Bobby" } }],
  ],
  [
    "metadata.status_code=500 matches the number 500 and the string 500",
    "metadata.status_code=500",
    [{ metadata: { status_code: 500 } }, { metadata: { status_code: "500" } }],
    [{ metadata: { status_code: 501 } }, { metadata: { status_code: "500 " } }],
  ],
  ["a number's text form is as JSON prints it", "metadata.n=1e+21 metadata.f=0.5", [{ metadata: { n: 1e21, f: 0.5 } }], [{ metadata: { n: 1e21, f: 0.25 } }]],
  ["a number's text form is not the written value: 5.0 does not equal the number 5", "metadata.n=5.0", [{ metadata: { n: "5.0" } }], [{ metadata: { n: 5 } }]],
  [
    "booleans have the text form true and false",
    "metadata.ok=true",
    [{ metadata: { ok: true } }, { metadata: { ok: "true" } }],
    [{ metadata: { ok: false } }, { metadata: { ok: 1 } }],
  ],
  [
    "objects and arrays never equal a value",
    'metadata.o="[object Object]" metadata.a=1',
    [],
    [{ metadata: { o: {}, a: [1] } }, { metadata: { o: { a: 1 }, a: 1 } }],
  ],
  [
    "!= on an object field is the exact complement: a missing field matches metadata.k!=5",
    "metadata.k!=5",
    [{ metadata: null }, { metadata: {} }, { metadata: { k: 6 } }, { metadata: { k: [5] } }],
    [{ metadata: { k: 5 } }, { metadata: { k: "5" } }],
  ],
  [
    "x=null on an object field matches a missing or null field",
    "metadata.k=null",
    [{ metadata: null }, { metadata: {} }, { metadata: { k: null } }],
    [{ metadata: { k: 0 } }, { metadata: { k: {} } }],
  ],
  [
    "x!=null on an object field matches a present non-null field",
    "metadata.k!=null",
    [{ metadata: { k: 0 } }, { metadata: { k: [] } }],
    [{ metadata: { k: null } }, { metadata: {} }],
  ],
  [
    "~ on an object field uses the text form: metadata.status_code~50 matches the number 500",
    "metadata.status_code~50",
    [{ metadata: { status_code: 500 } }, { metadata: { status_code: "X50" } }],
    [{ metadata: { status_code: 404 } }, { metadata: { status_code: { v: 500 } } }],
  ],
  ["~ on an object field is case-insensitive and knows booleans", "metadata.ok~RU", [{ metadata: { ok: true } }], [{ metadata: { ok: false } }]],
  ["!~ on an object field matches a missing field", "metadata.k!~x", [{ metadata: {} }, { metadata: { k: "y" } }], [{ metadata: { k: "X" } }]],
  [
    "numeric ranges match only number-valued fields",
    "metadata.ms>5",
    [{ metadata: { ms: 6 } }, { metadata: { ms: 5.5 } }],
    [{ metadata: { ms: 5 } }, { metadata: { ms: "6" } }, { metadata: {} }, { metadata: { ms: true } }],
  ],
  [
    "numeric ranges compare numbers, not text",
    "metadata.ms<=10 metadata.ms>=9",
    [{ metadata: { ms: 10 } }, { metadata: { ms: 9 } }],
    [{ metadata: { ms: 100 } }, { metadata: { ms: 11 } }],
  ],
  [
    "every dot nests one level",
    "metadata.http.status=200",
    [{ metadata: { http: { status: 200 } } }],
    [{ metadata: { "http.status": 200 } }, { metadata: { http: 200 } }],
  ],
  ["object keys are case-sensitive", "metadata.Status=1", [{ metadata: { Status: 1 } }], [{ metadata: { status: 1 } }]],
  ["paths walk objects only, never into arrays", "metadata.items.0=a metadata.items.length!=null", [], [{ metadata: { items: ["a"] } }]],
  ["paths never reach inherited properties", "metadata.constructor!=null", [], [{ metadata: {} }]],
  [
    "each object facet reads its own object",
    "actor.id=1 target.id=2 context.id=3 metadata.id=4",
    [{ actor: { id: 1 }, target: { id: 2 }, context: { id: 3 }, metadata: { id: 4 } }],
    [{ actor: { id: 4 }, target: { id: 3 }, context: { id: 2 }, metadata: { id: 1 } }],
  ],
  // timestamps
  ["timestamp= compares server_timestamp", `timestamp=${iso(T0)}`, [{ serverMs: T0, clientMs: 0 }], [{ serverMs: T0 + 1, clientMs: T0 }]],
  ["client_timestamp compares the client timestamp", `client_timestamp=${iso(T0)}`, [{ clientMs: T0, serverMs: 0 }], [{ clientMs: T0 + 1, serverMs: T0 }]],
  [
    "timestamps compare at full precision: an entry is before a sub-millisecond later instant",
    "timestamp<2026-11-22T10:00:00.0001Z",
    [{ serverMs: T0 }],
    [{ serverMs: T0 + 1 }],
  ],
  ["timestamps compare at full precision: = never holds for a sub-millisecond instant", "timestamp=2026-11-22T10:00:00.0001Z", [], [{ serverMs: T0 }]],
  [
    "timestamps compare at full precision: > is strict, >= includes the instant",
    `timestamp>${iso(T0)} timestamp>=${iso(T0 + 1)}`,
    [{ serverMs: T0 + 1 }],
    [{ serverMs: T0 }],
  ],
  [
    "timestamps compare at full precision: <= after a sub-millisecond instant",
    "timestamp<=2026-11-22T09:59:59.9999Z",
    [{ serverMs: T0 - 1 }],
    [{ serverMs: T0 }],
  ],
  ["a timestamp offset is converted to UTC", "timestamp=2026-11-22T11:00:00+01:00", [{ serverMs: T0 }], []],
  [
    "timestamp!= is the complement of =; a group means none of them",
    `timestamp!=${iso(T0)},${iso(T0 + 1)}`,
    [{ serverMs: T0 + 2 }],
    [{ serverMs: T0 }, { serverMs: T0 + 1 }],
  ],
  // the query as a whole
  [
    "terms are ANDed",
    "level=error disk",
    [{ level: "error", message: "disk" }],
    [
      { level: "error", message: "cpu" },
      { level: "info", message: "disk" },
    ],
  ],
  ["the empty query matches everything", "", [{}, { message: null }], []],
  ["a query of only spaces matches everything", "   ", [{}], []],
];

describe("matchQuery: one row per rule of §6", () => {
  for (const [rule, query, yes, no] of rows) {
    test(rule, () => {
      const q = parseQuery(query);
      expect({ yes: yes.map((e) => matchQuery(q, row(e), ENV)), no: no.map((e) => matchQuery(q, row(e), ENV)) }).toEqual({
        yes: yes.map(() => true),
        no: no.map(() => false),
      });
    });
  }
});

describe("matchTerm", () => {
  test("a range group is OR: metadata.ms<1,3 holds below either bound", () => {
    const [t] = parseQuery("metadata.ms<1,3").terms;
    expect([0, 2, 5].map((ms) => matchTerm(t, row({ metadata: { ms } }), ENV))).toEqual([true, true, false]);
  });
  test("matchQuery is matchTerm of every term", () => {
    const q = parseQuery("level=error action~login");
    const r = row({ level: "error", action: "user.login" });
    expect(matchQuery(q, r, ENV)).toBe(q.terms.every((t) => matchTerm(t, r, ENV)));
  });
});
