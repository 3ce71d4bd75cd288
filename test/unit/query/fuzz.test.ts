// fuzz: random text and mutations of valid queries never crash the parser: it returns a query whose
// printed form is stable and matches the same entries, or throws a 400 with one of the four query codes.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { ApiError } from "../../../src/errors.ts";
import { formatQuery } from "../../../src/query/format.ts";
import { matchQuery } from "../../../src/query/match.ts";
import { parseQuery } from "../../../src/query/parser.ts";
import { query, queryChar } from "./arbitrary.ts";
import { ENV, QUERY_CODES, row, stripPositions, T0 } from "./support.ts";

const SEEDS = [
  'level=error,warn message~"disk full" timeout',
  'tag=prod,"a b" metadata.status_code>=500 actor!=null',
  "timestamp>=2026-11-22T10:00:00.5+01:00 client_timestamp<2026-11-23T00:00:00Z",
  'action~"login*" message@"user@example.com" "quoted \\" phrase"',
  "id=0192f3a4-5b6c-7d8e-9f01-23456789abcd environment=production metadata.a.b!~x",
];
const ROWS = [
  row(),
  row({ level: "error", action: "login_failed", message: "Disk full", tags: ["prod", "a b"], metadata: { status_code: 500, a: { b: "X" } }, actor: { id: 1 } }),
  row({ message: null, tags: [], clientMs: T0 - 86_400_000, metadata: { status_code: "500" } }),
];

type Mutation = [kind: "insert" | "delete" | "replace" | "duplicate", at: number, char: string];
const mutation: fc.Arbitrary<Mutation> = fc.tuple(fc.constantFrom("insert", "delete", "replace", "duplicate"), fc.nat(), queryChar);

function mutate(text: string, mutations: Mutation[]): string {
  let s = text;
  for (const [kind, at, char] of mutations) {
    const i = s.length === 0 ? 0 : at % s.length;
    if (kind === "insert") s = s.slice(0, i) + char + s.slice(i);
    else if (kind === "delete") s = s.slice(0, i) + s.slice(i + 1);
    else if (kind === "replace") s = s.slice(0, i) + char + s.slice(i + 1);
    else s = s.slice(0, i) + s.slice(i, i + 7).repeat(2) + s.slice(i + 7);
  }
  return s;
}

// checkParse is the fuzz property: fast, and either a stable query or one of the four query errors
function checkParse(text: string): void {
  const started = performance.now();
  let parsed: ReturnType<typeof parseQuery>;
  try {
    parsed = parseQuery(text);
  } catch (e) {
    expect(performance.now() - started).toBeLessThan(50);
    if (!(e instanceof ApiError)) throw e;
    expect(e.status).toBe(400);
    expect(QUERY_CODES as readonly string[]).toContain(e.code);
    const position = e.details?.position as number;
    expect(Number.isInteger(position) && position >= 0 && position <= text.length).toBe(true);
    return;
  }
  expect(performance.now() - started).toBeLessThan(50);
  const printed = formatQuery(parsed);
  const again = parseQuery(printed);
  expect(formatQuery(again)).toBe(printed);
  expect(stripPositions(again)).toEqual(stripPositions(parsed));
  expect(ROWS.map((r) => matchQuery(again, r, ENV))).toEqual(ROWS.map((r) => matchQuery(parsed, r, ENV)));
}

describe("parseQuery fuzz", () => {
  test("random query-like text", () => {
    fc.assert(fc.property(fc.string({ unit: queryChar, maxLength: 120 }), checkParse), { numRuns: 2000 });
  });
  test("random long text around the 2,000-character limit", () => {
    fc.assert(fc.property(fc.string({ unit: queryChar, minLength: 1900, maxLength: 2100 }), checkParse), { numRuns: 200 });
  });
  test("arbitrary Unicode text", () => {
    fc.assert(fc.property(fc.string({ unit: "binary", maxLength: 80 }), checkParse), { numRuns: 1000 });
  });
  test("mutations of hand-written valid queries", () => {
    fc.assert(
      fc.property(fc.constantFrom(...SEEDS), fc.array(mutation, { minLength: 1, maxLength: 4 }), (seed, ms) => checkParse(mutate(seed, ms))),
      { numRuns: 2000 },
    );
  });
  test("mutations of generated valid queries", () => {
    fc.assert(
      fc.property(query, fc.array(mutation, { minLength: 1, maxLength: 3 }), (q, ms) => checkParse(mutate(formatQuery(q), ms))),
      { numRuns: 1500 },
    );
  });
  test("the seeds themselves parse", () => {
    for (const seed of SEEDS) expect(parseQuery(seed).terms.length).toBeGreaterThan(0);
  });
});
