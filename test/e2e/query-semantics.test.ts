// Query language semantics over HTTP (contract §5 and §6): a small fixed data set, then one named
// test per facet/operator rule, each asserting the exact ids returned in the read order.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

/** json reads a response body as the loosely typed JSON the assertions inspect. */
const json = (res: Response): Promise<any> => res.json();

const T1 = Date.parse("2026-11-22T10:00:00.000Z");
const T2 = T1 + 1000; // 10:00:01.000
const T3 = T2 + 1000; // 10:00:02.000
const T4 = T3 + 1; // 10:00:02.001
const NOON = "2026-11-22T12:00:00Z";

// Eight entries in four writes; the letters are their labels. Read order: H, G F E, D, C B A.
const DATA: Record<string, Record<string, unknown>> = {
  A: {
    action: "user.login",
    level: "info",
    message: "User alice logged in from Berlin",
    tags: ["auth", "web"],
    actor: { id: "alice", role: "admin" },
    metadata: { status_code: 200, ms: 12.5, http: { method: "GET" } },
    clientTimestamp: "2026-11-22T09:00:00.000Z",
  },
  B: {
    action: "login_failed",
    level: "warn",
    message: 'Bad password for bob (said "hunter2" in C:\\temp)',
    tags: ["auth"],
    actor: { id: "bob" },
    metadata: { status_code: 401 },
    clientTimestamp: "2026-11-22T09:00:00.001Z",
  },
  C: {
    action: "login",
    level: "error",
    tags: [],
    metadata: { status_code: "500" },
    context: { region: "eu", "a.b": 1 },
    clientTimestamp: "2026-11-22T10:00:00.123+02:00",
  },
  D: {
    action: "payment.charge",
    level: "error",
    message: "Charge failed: card declined (code 500)",
    tags: ["billing", "Web"],
    target: { id: "ord-1" },
    metadata: { status_code: 500, amount: 99.99, items: [1, 2] },
    clientTimestamp: "2026-11-21T23:00:00Z",
  },
  E: {
    action: "Payment.Refund",
    level: "info",
    message: "refund issued to alice",
    tags: ["billing"],
    actor: null,
    metadata: { status_code: 5000, nested: { deep: { x: "y" } } },
    clientTimestamp: NOON,
  },
  F: { action: "cron.cleanup", level: "debug", message: "Login page cache cleared", tags: ["ops", "a*b", "null"], metadata: null, clientTimestamp: NOON },
  G: {
    action: "user.logout",
    level: "trace",
    message: "Straße geschlossen",
    tags: ["web", 'say"hi'],
    metadata: { status_code: null, amount: "99.99" },
    clientTimestamp: NOON,
  },
  H: { action: "ALERT*STAR", level: "fatal", message: "disk 100% full *now*", tags: ["ops"], metadata: { status_code: true }, clientTimestamp: NOON },
};
const ORDER = "HGFEDCBA";

let s: TestSluice;
let key: string;
let now = T1;
const id: Record<string, string> = {};
const label: Record<string, string> = {};
let prodIds: string[] = []; // the same eight entries written by a production key

const post = (path: string, body: unknown) => s.call("POST", `${WS}${path}`, { key, body });

async function labelsOf(res: Response): Promise<string> {
  const body = await json(res);
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.map((e: { id: string }) => label[e.id] ?? "?").join("");
}
/** run answers a query with the labels of the entries found, in the order returned. */
const run = async (query: string, extra: Record<string, unknown> = {}) => labelsOf(await post("/logs/query", { query, pageSize: 100, ...extra }));
const list = async (params: Record<string, string>) => labelsOf(await s.call("GET", `${WS}/logs?${new URLSearchParams(params)}`, { key }));
/** except lists every label but the given ones, in the read order. */
const except = (gone: string) => [...ORDER].filter((l) => !gone.includes(l)).join("");

async function write(labels: string) {
  const res = await post(
    "/logs/bulk",
    [...labels].map((l) => entry(DATA[l])),
  );
  expect(res.status).toBe(201);
  for (const [i, x] of ((await json(res)).ids as string[]).entries()) {
    id[labels[i]] = x;
    label[x] = labels[i];
  }
}

beforeAll(async () => {
  s = startTestSluice(undefined, { clock: () => now, ipRatePerMinute: -1 });
  const ws = await s.workspace();
  key = await ws.key("development", "rw");
  await write("ABC");
  now = T2;
  await write("D");
  now = T3;
  await write("EFG");
  now = T4;
  await write("H");
  // the same workspace's production entries are never seen by a development key
  const prod = await ws.key("production", "rw");
  const res = await s.call("POST", `${WS}/logs/bulk`, { key: prod, body: Object.values(DATA).map((e) => entry(e)) });
  expect(res.status).toBe(201);
  prodIds = (await json(res)).ids;
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

type Row = [rule: string, query: string, want: string];
const table = (title: string, rows: () => Row[]) =>
  describe(title, () => {
    test.each(rows())("%s: %s", async (_rule, q, want) => {
      expect(await run(q)).toBe(want);
    });
  });

test("the data set reads back in the contract's order: server_timestamp desc, then id desc", async () => {
  expect(await run("")).toBe(ORDER);
});

table("level and environment: exact, case-sensitive; groups OR, != none of", () => [
  ["level=", "level=error", "DC"],
  ["a group is any of", "level=error,warn", "DCB"],
  ["!= is every other level", "level!=info", except("AE")],
  ["!= with a group is none of them", "level!=error,warn", "HGFEA"],
  ["the key's own environment is every entry", "environment=development", ORDER],
  ["!= the key's own environment is nothing", "environment!=development", ""],
  ["naming another environment is a plain filter that matches nothing (no 403)", "environment=production", ""],
  ["!= another environment is every entry", "environment!=staging", ORDER],
  ["a group holding the own environment is every entry", "environment=production,development", ORDER],
]);

table("action: = != case-insensitive equality, ~ substring or glob, @ words", () => [
  ["= is case-insensitive equality", "action=LOGIN", "C"],
  ["= is not a substring", "action=user", ""],
  ["= lowercases both sides", "action=payment.refund", "E"],
  ["!= is the complement of =", "action!=login", except("C")],
  ["a group of = is any of", "action=login,USER.LOGIN", "CA"],
  ["~ is a case-insensitive substring", "action~LOGIN", "CBA"],
  ['~ with * is a glob over the whole text: "login*" matches login and login_failed, not user.login', 'action~"login*"', "CB"],
  ["a glob with * inside", "action~user.*", "GA"],
  ["a glob * at both ends is a substring of the middle", "action~*.LOG*", "GA"],
  ["a glob must match to the end", "action~*.log", ""],
  ["!~ is the complement of ~", "action!~login", "HGFED"],
  ["!~ with a group is none of them", "action!~login,payment", "HGF"],
  ["@ needs every word of the value among the action's words", 'action@"login user"', "A"],
  ["@ splits at every non-letter: login_failed holds the word failed", "action@FAILED", "B"],
  ["@ matches whole words, never parts of them", "action@log", ""],
  ["action is never null", "action=null", ""],
  ["action!=null is every entry", "action!=null", ORDER],
]);

table("message: = != ~ !~ @ and null checks", () => [
  ["= is case-insensitive equality of the whole message", 'message="REFUND issued TO alice"', "E"],
  ["= is not a substring", "message=refund", ""],
  ["=null matches the entry without a message", "message=null", "C"],
  ['"null" quoted is the text null, not the null literal', 'message="null"', ""],
  ["!=null matches every entry with a message", "message!=null", except("C")],
  ["!= matches an entry without a message (exact complement)", 'message!="refund issued to alice"', except("E")],
  ["~ is a case-insensitive substring", "message~ALICE", "EA"],
  ["a group of ~ is any of", "message~alice,card", "EDA"],
  ["~ with * is a glob over the whole message", "message~*alice", "E"],
  ["!~ matches an entry without a message (exact complement of ~)", "message!~alice", "HGFDCB"],
  ["case-insensitive is Unicode toLowerCase on both sides", 'message~"STRAßE"', "G"],
  ["toLowerCase does not fold ß to ss", "message~strasse", ""],
  ['inside quotes \\" is a quote', 'message~"\\"hunter2\\""', "B"],
  ["inside quotes any other backslash is literal", 'message~"C:\\temp"', "B"],
  ["inside quotes \\\\ is one backslash", 'message~"C:\\\\temp"', "B"],
  ["@ needs every word, in any order", 'message@"alice refund"', "E"],
  ["@ is case-insensitive", "message@LOGIN", "F"],
  ["@ matches whole words only", "message@ali", ""],
  ["@ with a group is any of", "message@berlin,refund", "EA"],
]);

table("tag (alias tags): = exact case-sensitive, ~ substring/glob, null checks", () => [
  ["= matches any of the entry's tags", "tag=auth", "BA"],
  ["= is case-sensitive", "tag=web", "GA"],
  ["= with another case finds the other tag", "tag=Web", "D"],
  ["tags is an alias of tag", "tags=web", "GA"],
  ["a group is any of", "tag=auth,billing", "EDBA"],
  ["!= matches entries without that tag, including those without tags", "tag!=auth", "HGFEDC"],
  ["!= with a group is none of them", "tag!=web,Web,ops", "ECB"],
  ["~ is a case-insensitive substring of any tag", "tag~WE", "GDA"],
  ["~ with * is a glob over a whole tag", "tag~a*b", "F"],
  ["!~ with a group is none of them", "tag!~web,ops", "ECB"],
  ["=null is no tags", "tag=null", "C"],
  ["!=null is some tag", "tags!=null", except("C")],
  ['"null" quoted is the tag named null', 'tag="null"', "F"],
  ['a " inside a bare word is an ordinary character', 'tag=say"hi', "G"],
]);

describe("id: the canonical lowercase UUID, exactly", () => {
  test("id= finds the entry", async () => expect(await run(`id=${id.A}`)).toBe("A"));
  test("an upper-case UUID is valid and matches nothing", async () => expect(await run(`id=${id.A.toUpperCase()}`)).toBe(""));
  test("id!= is every other entry", async () => expect(await run(`id!=${id.A}`)).toBe(except("A")));
  test("a group of ids is any of", async () => expect(await run(`id=${id.A},${id.H}`)).toBe("HA"));
  test("id!= with a group is none of them", async () => expect(await run(`id!=${id.A},${id.H}`)).toBe(except("AH")));
  test("an entry of another environment of the same workspace is not found by id", async () => {
    expect(prodIds).toHaveLength(8);
    expect(await run(`id=${prodIds.join(",")}`)).toBe("");
    expect(await run(`id=${prodIds[0]},${id.B}`)).toBe("B");
  });
});

table("timestamps: instants compared at full precision", () => [
  ["timestamp= is server_timestamp=", "timestamp=2026-11-22T10:00:00Z", "CBA"],
  ["the same instant at another offset", "server_timestamp=2026-11-22T11:00:00+01:00", "CBA"],
  ["< is strictly before", "timestamp<2026-11-22T10:00:01Z", "CBA"],
  ["<= includes the instant", "timestamp<=2026-11-22T10:00:01.000Z", "DCBA"],
  [">= includes the instant", "server_timestamp>=2026-11-22T10:00:02Z", "HGFE"],
  ["> is strictly after", "timestamp>2026-11-22T10:00:02Z", "H"],
  ["< half a millisecond after T3 includes T3, not T3 + 1 ms", "timestamp<2026-11-22T10:00:02.0005Z", except("H")],
  ["> half a millisecond after T3 is only T3 + 1 ms", "timestamp>2026-11-22T10:00:02.0005Z", "H"],
  ["= one nanosecond after an entry's instant does not equal it", "timestamp=2026-11-22T10:00:02.000000001Z", ""],
  [">= one nanosecond after T3 excludes T3", "timestamp>=2026-11-22T10:00:02.000000001Z", "H"],
  ["!= is the complement of =", "timestamp!=2026-11-22T10:00:02Z", "HDCBA"],
  ["a group is any of", "timestamp=2026-11-22T10:00:00Z,2026-11-22T10:00:02.001Z", "HCBA"],
  ["client_timestamp= with the same instant at another offset", "client_timestamp=2026-11-22T08:00:00.123Z", "C"],
  ["client_timestamp at millisecond precision", "client_timestamp=2026-11-22T09:00:00.001Z", "B"],
  ["client_timestamp< the millisecond of B", "client_timestamp<2026-11-22T09:00:00.001Z", "DCA"],
  ["client_timestamp> half a millisecond before B includes B", "client_timestamp>2026-11-22T09:00:00.0005Z", "HGFEB"],
  ["client_timestamp and server_timestamp are different facets", "client_timestamp>=2026-11-22T12:00:00Z timestamp<2026-11-22T10:00:02.001Z", "GFE"],
]);

table("whole objects: =null and !=null", () => [
  ["actor=null matches a missing or null actor", "actor=null", "HGFEDC"],
  ["actor!=null matches a present actor", "actor!=null", "BA"],
  ["target!=null", "target!=null", "D"],
  ["context=null", "context=null", except("C")],
  ["metadata=null matches a null metadata", "metadata=null", "F"],
  ["metadata!=null", "metadata!=null", except("F")],
]);

table("object paths: text form with = and ~, numbers with ranges", () => [
  ['= compares the text form: 500 matches the number 500 and the string "500"', "metadata.status_code=500", "DC"],
  ["= is exact: 500 is not 5000", "metadata.status_code=50", ""],
  ["!= is the exact complement: missing and null fields match", "metadata.status_code!=500", "HGFEBA"],
  ["a field missing everywhere matches !=", "metadata.missing!=5", ORDER],
  ["true is the text form of a boolean", "metadata.status_code=true", "H"],
  ["quoting does not change the text form", 'metadata.status_code="true"', "H"],
  ["a number prints as JSON prints it", "metadata.amount=99.99", "GD"],
  ["=null is a missing or null field", "metadata.status_code=null", "GF"],
  ["!=null is a present non-null field", "metadata.status_code!=null", "HEDCBA"],
  ['~ is a substring of the text form: 50 is in 500, "500" and 5000', "metadata.status_code~50", "EDC"],
  ["!~ is its complement", "metadata.status_code!~50", "HGFBA"],
  ["every dot nests one level", "metadata.http.method=GET", "A"],
  ["object keys and values compare case-sensitively", "metadata.http.method=get", ""],
  ["path keys are case-sensitive", "metadata.Status_code=500", ""],
  ["a dotted key is not reached: each dot nests", "context.a.b=1", ""],
  ["deep paths", "metadata.nested.deep.x=y", "E"],
  ["an object never equals a value", "metadata.http=GET", ""],
  ["an object has no text form for ~", "metadata.nested~deep", ""],
  ["an array never equals a value", "metadata.items=1", ""],
  ["paths never walk into arrays", "metadata.items.0=1", ""],
  ["an array field is present: !=null", "metadata.items!=null", "D"],
  ['>= matches number-valued fields only (not the string "500")', "metadata.status_code>=500", "ED"],
  ["< skips strings, booleans and nulls", "metadata.status_code<1000", "DBA"],
  ["a quoted number is a number", 'metadata.status_code>"400"', "EDB"],
  ["an exponent is a number", "metadata.status_code>4e2", "EDB"],
  ["<= with a fraction", "metadata.ms<=12.5", "A"],
  ["> on a field holding a number string matches nothing", "metadata.amount>99", "D"],
]);

table("free words and quoted phrases: all words in action, or all in message", () => [
  ["a free word searches action and message", "alice", "EA"],
  ["free words are case-insensitive", "ALICE", "EA"],
  ["a word found in actions and in a message", "login", "FCBA"],
  ["two free words are two terms: each may be in either field", "login alice", "A"],
  ["a quoted phrase needs all its words in one field: none has both login and alice", '"login alice"', ""],
  ["a phrase with all words in the message", '"berlin alice"', "A"],
  ["a phrase with all words in the action", '"user.login"', "A"],
  ["a free word a,b is the two words a and b (no group)", "alice,berlin", "A"],
  ["free words are whole words", "berl", ""],
  ["a free word with no words adds no condition", "---", ORDER],
  ["a quoted phrase with no words adds no condition", '"!!! ..."', ORDER],
  ["@ with a value with no words adds no condition", 'message@"--"', ORDER],
  ["action@ with a value with no words adds no condition", "action@...", ORDER],
  ["a wordless free term with another term leaves that term alone", "--- level=error", "DC"],
  ["! alone is no operator: a!b is the free words a and b", "user!login", "A"],
]);

describe("terms are ANDed", () => {
  test.each([
    ["level=info tag=web", "A"],
    ["level=error,warn tag=auth", "B"],
    ["tag=billing metadata.status_code>=1000", "E"],
    ["alice level!=info", ""],
    ["actor!=null message~bob", "B"],
  ])("%s", async (q, want) => expect(await run(q)).toBe(want));
});

describe("GET /logs filters run through the same engine", () => {
  test.each([
    [{ action: "LOGIN" }, "CBA"],
    [{ action: "login*" }, ""],
    [{ action: "alert*" }, "H"],
    [{ message: "*now*" }, "H"],
    [{ message: "*alice" }, ""],
    [{ message: "ALICE" }, "EA"],
    [{ levels: "error,warn" }, "DCB"],
    [{ tags: "auth,billing" }, "EDBA"],
    [{ tags: "Web" }, "D"],
    [{ tags: "web", levels: "info" }, "A"],
    [{ action: "user", levels: "trace" }, "G"],
    [{ environments: "development", message: "card" }, "D"],
  ])("GET /logs?%j (substrings case-insensitive with * literal; lists any-of; ANDed)", async (params, want) => {
    expect(await list(params as Record<string, string>)).toBe(want);
  });

  test('the GET filter action=login* is literal where the query action~"login*" is a glob', async () => {
    expect({ get: await list({ action: "login*" }), query: await run('action~"login*"') }).toEqual({ get: "", query: "CB" });
  });
});

describe("the body action of POST /logs/query: a literal substring ANDed with query", () => {
  test.each([
    ["LOGIN", "", "CBA"],
    ["login*", "", ""],
    ["alert*", "", "H"],
    ["*", "", "H"],
    ["user", "level=info", "A"],
    ["user", "level=info,trace", "GA"],
    ["payment", "alice", "E"],
    ["login", "action=login", "C"],
  ])("action %j with query %j", async (action, q, want) => {
    expect(await run(q, { action })).toBe(want);
  });

  test("from (inclusive) and to (exclusive) are ANDed with the query", async () => {
    const extra = { from: new Date(T2).toISOString(), to: new Date(T4).toISOString() };
    expect(await run("", extra)).toBe("GFED");
    expect(await run("tag=billing", extra)).toBe("ED");
  });
});

test("negation is the exact complement: q and its negation split the entries", async () => {
  const pairs = [
    ["level=info", "level!=info"],
    ["action~log", "action!~log"],
    ["message=null", "message!=null"],
    ["message~alice", "message!~alice"],
    ["tag=web", "tag!=web"],
    ["tag~b", "tag!~b"],
    ["metadata.status_code=500", "metadata.status_code!=500"],
    ["metadata.amount~9", "metadata.amount!~9"],
    ["actor=null", "actor!=null"],
    ["metadata.x=null", "metadata.x!=null"],
    [`id=${id.C}`, `id!=${id.C}`],
    ["client_timestamp=2026-11-22T12:00:00Z", "client_timestamp!=2026-11-22T12:00:00Z"],
  ];
  for (const [q, not] of pairs) {
    const [yes, no] = [await run(q), await run(not)];
    expect({ q, both: [...ORDER].filter((l) => yes.includes(l) || no.includes(l)).join(""), overlap: [...yes].filter((l) => no.includes(l)) }).toEqual({
      q,
      both: ORDER,
      overlap: [],
    });
  }
});
