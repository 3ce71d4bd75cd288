// POST /logs/query faults over HTTP (contract §5 and §6): each error code with details.position,
// messages that say how to fix the query, the order of faults, and how the body's fields are read.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { entry, removeDir, startTestSluice, WS, type TestSluice } from "../helpers/sluice.ts";

/** json reads a response body as the loosely typed JSON the assertions inspect. */
const json = (res: Response): Promise<any> => res.json();

const SYNTAX = "VALIDATION_QUERY_SYNTAX";
const INVALID = "VALIDATION_QUERY_INVALID";
const TIME = "VALIDATION_QUERY_TIME_RANGE";
const CONSTRAINT = "VALIDATION_QUERY_CONSTRAINT";
const words = (n: number, w = "x") => Array(n).fill(w).join(" ");
const group = (n: number, v = "a") => Array(n).fill(v).join(",");

let s: TestSluice;
let key: string;
let all: string[]; // ids of the workspace's entries, newest first

const query = (body: unknown) => s.call("POST", `${WS}/logs/query`, { key, body });
const raw = (text: string) => s.call("POST", `${WS}/logs/query`, { key, raw: text, headers: { "content-type": "application/json" } });

async function fault(res: Response) {
  const body = await json(res);
  return { status: res.status, code: body.error_code, position: body.details?.position, message: body.message as string, body };
}

async function ids(res: Response): Promise<string[]> {
  expect(res.status).toBe(200);
  return (await json(res)).map((e: { id: string }) => e.id);
}

beforeAll(async () => {
  s = startTestSluice(undefined, { ipRatePerMinute: -1 });
  key = await (await s.workspace()).key("development", "rw");
  const res = await s.call("POST", `${WS}/logs/bulk`, {
    key,
    body: [entry({ level: "error" }), entry({ action: "job.run", message: "ok" }), entry({ tags: ["a"] })],
  });
  expect(res.status).toBe(201);
  all = ((await json(res)).ids as string[]).reverse();
});
afterAll(async () => {
  await s.close();
  removeDir(s.dir);
});

type Row = [rule: string, query: string, code: string, position: number];

const rows: Row[] = [
  // VALIDATION_QUERY_SYNTAX
  ["an unterminated quote", 'level=error message="disk', SYNTAX, 20],
  ["an empty value", "level=", SYNTAX, 6],
  ["an empty group member", "level=error,,warn", SYNTAX, 12],
  ["an operator with no facet", "tag=a =x", SYNTAX, 6],
  ["spaces around the operator leave it without a facet", "level = error", SYNTAX, 6],
  ["after a closing quote only a space, the end or a comma may follow", 'message="disk"full', SYNTAX, 14],
  ['"" is an empty value', 'message=""', SYNTAX, 8],
  ['"" as a free phrase is an empty value', 'level=info ""', SYNTAX, 11],
  // VALIDATION_QUERY_INVALID
  ["an unknown facet", "level=error host=web1", INVALID, 12],
  ["a bare word holding an operator is a facet expression: user@example.com is the unknown facet user", "user@example.com", INVALID, 0],
  ["facet names are case-sensitive", "Level=error", INVALID, 0],
  ["an empty path segment", "metadata..x=1", INVALID, 0],
  ["an operator not allowed for level", "level~err", INVALID, 5],
  ["@ is not allowed for tag", "tag@a", INVALID, 3],
  ["a whole object has only null checks: ~ is not allowed", "actor~x", INVALID, 5],
  ["a whole object compares only with null", "actor=bob", INVALID, 6],
  ["a non-UUID for id", "id=123", INVALID, 3],
  ["an unknown level value", "level=critical", INVALID, 6],
  ["an unknown level inside a group points at that member", "level=error,fatal,loud", INVALID, 18],
  ["an unknown environment value", "environment=prod", INVALID, 12],
  ["null with ~ (message~null)", "message~null", INVALID, 8],
  ["null for id (id=null)", "id=null", INVALID, 3],
  ["null for a timestamp (timestamp=null)", "timestamp=null", INVALID, 10],
  ["a range on an object field needs a number value", "metadata.ms>fast", INVALID, 12],
  // VALIDATION_QUERY_TIME_RANGE
  ["a timestamp value that is not RFC 3339", "timestamp>yesterday", TIME, 10],
  ["a date alone", "timestamp>2026-11-22", TIME, 10],
  ["a date-time without an offset", "client_timestamp>=2026-11-22T10:00:00", TIME, 18],
  ["a space for T", 'server_timestamp<"2026-11-22 10:00:00Z"', TIME, 17],
  // VALIDATION_QUERY_CONSTRAINT
  ["a query over 2,000 characters", "x".repeat(2001), CONSTRAINT, 2000],
  ["length counts UTF-16 code units", `"${"😀".repeat(1000)}"`, CONSTRAINT, 2000],
  ["over 20 terms points at the 21st", words(21), CONSTRAINT, 40],
  ["free words count as terms", `level=error ${words(20, "w")}`, CONSTRAINT, 12 + 19 * 2],
  ["over 100 values in one group points at the 101st", `tag=${group(101)}`, CONSTRAINT, 204],
  ["values of all groups and single values count together", `tag=${group(100)} level=info`, CONSTRAINT, 210],
  // the first fault in the contract's order
  ["length before syntax", `"${"x".repeat(2001)}`, CONSTRAINT, 2000],
  ["syntax before term count", `${words(25)} "open`, SYNTAX, 50],
  ["syntax before facet: a later syntax fault beats an earlier unknown facet", "host=web =x", SYNTAX, 9],
  ["term count before value count", `${words(20, `tag=${group(6)}`)} x`, CONSTRAINT, 20 * 16],
  ["value count before facet", `host=a tag=${group(100)}`, CONSTRAINT, 209],
  ["per term left to right: a bad value of the first term beats an unknown facet of the second", "level=ERROR host=web", INVALID, 6],
  ["a bad time value before a later unknown facet", "timestamp>soon host=web", TIME, 10],
  ["within a term, facet before operator", "host~null", INVALID, 0],
  ["within a term, operator before value", "level~ERROR", INVALID, 5],
];

describe("each query fault → 400 with its code and details.position", () => {
  test.each(rows)("%s: %j → %s at %i", async (_rule, q, code, position) => {
    const f = await fault(await query({ query: q }));
    expect({ status: f.status, code: f.code, position: f.position }).toEqual({ status: 400, code, position });
    expect(f.body.request_id).toMatch(/^[0-9a-f-]{36}$/i);
    expect(f.message.length).toBeGreaterThan(20);
  });
});

describe("limits are inclusive", () => {
  test.each([
    ["2,000 characters", "x".repeat(2000)],
    ["20 terms", words(20)],
    ["100 values across groups", `tag=${group(60)} level=${group(40, "info")}`],
    ["100 values plus free words (free words are no values)", `tag=${group(100)} w v`],
  ])("a query of exactly %s is accepted", async (_n, q) => {
    expect((await query({ query: q })).status).toBe(200);
  });
});

describe("messages say how to fix the query", () => {
  test.each([
    ["an unterminated quote asks to close it", 'message="disk', [/close/i, /"/]],
    ["an unknown facet holding @ suggests quoting the text", "user@example.com", [/"user@example\.com"/]],
    ["a facet in the wrong case names the right one", "Level=error", [/\blevel\b/]],
    ["an unknown level lists the six levels", "level=critical", [/trace/, /debug/, /info/, /warn/, /error/, /fatal/]],
    ["an unknown environment lists the environments", "environment=prod", [/development/, /staging/, /production/]],
    ["a non-UUID id shows the UUID form", "id=123", [/UUID/i]],
    ["null with ~ shows how to search the text null", "message~null", [/message~"null"|message=null/]],
    ["a bad timestamp shows an RFC 3339 example", "timestamp>yesterday", [/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/]],
    ["a long query names the limit", "x".repeat(2001), [/2,?000/]],
    ["too many terms names the limit", words(21), [/\b20\b/]],
    ["too many values names the limit", `tag=${group(101)}`, [/\b100\b/]],
  ] as [string, string, RegExp[]][])("%s", async (_rule, q, patterns) => {
    const f = await fault(await query({ query: q }));
    expect(f.status).toBe(400);
    for (const p of patterns) expect(f.message).toMatch(p);
  });
});

describe("the body of POST /logs/query", () => {
  test("a faulty query is reported before a faulty from", async () => {
    const f = await fault(await query({ query: "level=loud", from: "yesterday" }));
    expect({ code: f.code, position: f.position }).toEqual({ code: INVALID, position: 6 });
  });

  test("a query syntax fault is reported before from after to", async () => {
    const f = await fault(await query({ query: 'tag="open', from: "2026-11-23T00:00:00Z", to: "2026-11-22T00:00:00Z" }));
    expect({ code: f.code, position: f.position }).toEqual({ code: SYNTAX, position: 4 });
  });

  test("a faulty query is reported before an empty-string to", async () => {
    const f = await fault(await query({ query: `tag=${group(101)}`, to: "" }));
    expect({ code: f.code, position: f.position }).toEqual({ code: CONSTRAINT, position: 204 });
  });

  test("a valid query with from after to → VALIDATION_QUERY_TIME_RANGE", async () => {
    const f = await fault(await query({ query: "level=error", from: "2026-11-23T00:00:00Z", to: "2026-11-22T00:00:00Z" }));
    expect({ status: f.status, code: f.code }).toEqual({ status: 400, code: TIME });
  });

  test("from after to by less than a millisecond is still after", async () => {
    const f = await fault(await query({ from: "2026-11-22T00:00:00.0000002Z", to: "2026-11-22T00:00:00.0000001Z" }));
    expect({ status: f.status, code: f.code }).toEqual({ status: 400, code: TIME });
  });

  test.each([
    ["from", ""],
    ["to", ""],
    ["from", "2026-11-22"],
    ["to", "2026-11-22T10:00:00"],
    ["from", 1764000000000],
  ])("%s %j (empty string or not RFC 3339) → VALIDATION_QUERY_TIME_RANGE", async (field, value) => {
    const f = await fault(await query({ query: "level=error", [field]: value }));
    expect({ status: f.status, code: f.code }).toEqual({ status: 400, code: TIME });
  });

  test.each(["query", "from", "to", "action", "cursorID", "cursorTS", "pageSize", "explain"])(
    "JSON null for %s means absent: every entry is returned",
    async (field) => {
      expect(await ids(await query({ [field]: null }))).toEqual(all);
    },
  );

  test("cursorID and cursorTS both null are both absent, not only one of them", async () => {
    expect(await ids(await query({ cursorID: null, cursorTS: null, pageSize: 10 }))).toEqual(all);
  });

  test.each([" ", "   ", " ".repeat(2000)])("a query of only spaces (%j) matches everything", async (q) => {
    expect(await ids(await query({ query: q }))).toEqual(all);
  });

  test("runs of spaces around terms count as one separator", async () => {
    const spaced = await ids(await query({ query: "   level=info    tag=a   " }));
    expect(spaced).toEqual(await ids(await query({ query: "level=info tag=a" })));
    expect(spaced).toEqual([all[0]]);
  });

  test("only the space character separates terms: a tab keeps two words in one phrase", async () => {
    // job is a word of the action "job.run", ok a word of the message "ok": as two terms they match, as one phrase not
    expect(await ids(await query({ query: "job ok" }))).toEqual([all[1]]);
    expect(await ids(await query({ query: "job\tok" }))).toEqual([]);
  });

  test.each(["[]", '["level=error"]', '"level=error"', "42", "true", "null"])("a body that is no JSON object (%s) → 400", async (body) => {
    const f = await fault(await raw(body));
    expect(f.status).toBe(400);
    expect(f.code).toMatch(/^VALIDATION_/);
  });

  test.each([[42], [true], [["level=error"]], [{ level: "error" }]])("query %j (not a string) → 400", async (q) => {
    const f = await fault(await query({ query: q }));
    expect(f.status).toBe(400);
    expect(f.code).toMatch(/^VALIDATION_/);
  });

  test("an unparseable body → 400 VALIDATION_INVALID_JSON", async () => {
    expect((await fault(await raw('{"query": "level=error"'))).code).toBe("VALIDATION_INVALID_JSON");
  });
});
