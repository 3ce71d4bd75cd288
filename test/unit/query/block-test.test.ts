// The block test (compileBlockTest): a block is skipped unread only when none of its entries can match.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { IdGenerator } from "../../../src/ids.ts";

const generator = new IdGenerator();
const nextIds = (count: number, now = Date.now()) => generator.next(count, now);
import type { Query, Term } from "../../../src/query/ast.ts";
import { compileBlockTest } from "../../../src/query/compile.ts";
import { matchQuery } from "../../../src/query/match.ts";
import { parseQuery } from "../../../src/query/parser.ts";
import { Block, type Entry } from "../../../src/storage/format/block.ts";
import { encodeBlock } from "../../../src/storage/format/block-encode.ts";
import { words } from "../../../src/words.ts";

const blockOf = (messages: (string | null)[], metadata: (Record<string, unknown> | null)[] = [], actions: string[] = []): Block =>
  Block.decode(
    0,
    encodeBlock(
      nextIds(messages.length).ids.map(
        (id, i): Entry => ({
          id,
          level: "info",
          action: actions[i] ?? "a",
          message: messages[i],
          tags: [],
          clientMs: 0,
          actor: null,
          target: null,
          context: null,
          metadata: metadata[i] ?? null,
        }),
      ),
    ),
  );
const matchingPositions = (q: Query, b: Block) =>
  Array.from({ length: b.size }, (_, i) => i).filter((i) => matchQuery(q, { serverMs: 0, entry: b.entry(i) }, "production"));

// characters that make case and bytes hard: the Kelvin sign and dotted İ lowercase to ASCII letters, ß and Σ change length or context
const CHARS = ["1", "2", "-", " ", ":", ".", "*", "a", "B", "k", "K", "\u212a", "i", "\u0130", "é", "ß", "Σ", "😀", "\u0000"];
const textArb = fc.string({ unit: fc.constantFrom(...CHARS), maxLength: 12 });
const termArb: fc.Arbitrary<Term> = fc.oneof(
  fc
    .array(textArb, { minLength: 1, maxLength: 2 })
    .map((vs): Term => ({ kind: "text", facet: "message", op: "~", values: vs.map((text) => ({ kind: "string", text, pos: 0 })), pos: 0 })),
  textArb.map((text): Term => ({ kind: "literal", facet: "message", text, pos: 0 })),
  fc
    .tuple(fc.constantFrom<"=" | "@">("=", "@"), textArb)
    .map(([op, text]): Term => ({ kind: "text", facet: "message", op, values: [{ kind: "string", text, pos: 0 }], pos: 0 })),
  textArb.map((text): Term => ({ kind: "free", text, words: words(text), pos: 0 })),
);

// a message made from a term's own value, so that most cases match: each `*` filled in, letters' case flipped at random
const matchingMessage = (t: Term, fill: string[], flips: boolean[]) => {
  const value = t.kind === "literal" || t.kind === "free" ? t.text : t.kind === "text" && t.values[0].kind === "string" ? t.values[0].text : "";
  const text =
    t.kind === "literal"
      ? value
      : value
          .split("*")
          .map((part, i) => (i > 0 ? fill[i % fill.length] : "") + part)
          .join("");
  const flipped = [...text].map((c, i) => (flips[i % flips.length] ? c.toUpperCase() : c)).join("");
  return t.kind === "literal" ? fill[0] + flipped + fill[1 % fill.length] : flipped;
};

test("an entry that matches is always among the positions the block test leaves (message ~, =, @, free words and the message filter, globs, any case, any text)", () => {
  let matched = 0;
  fc.assert(
    fc.property(
      fc.array(fc.option(textArb, { nil: null }), { maxLength: 6 }),
      fc.array(termArb, { minLength: 1, maxLength: 2 }),
      fc.array(textArb, { minLength: 2, maxLength: 3 }),
      fc.array(fc.boolean(), { minLength: 1, maxLength: 5 }),
      (others, terms, fill, flips) => {
        const q: Query = { terms };
        const block = blockOf([...others, matchingMessage(terms[0], fill, flips)]);
        const blockTest = compileBlockTest(q, "production");
        const matching = matchingPositions(q, block);
        if (blockTest && matching.length > 0) {
          matched++;
          const left = blockTest(block);
          for (const i of matching) expect(left === undefined || left.includes(i)).toBe(true);
        }
      },
    ),
    { numRuns: 3000 },
  );
  expect(matched).toBeGreaterThan(100); // the cases that test something (about 200 of 3,000)
});

test("the block test leaves only the entries whose message, lowercased, holds a value's ASCII pieces, and none of a block without them", () => {
  const blockTest = compileBlockTest(parseQuery('message~"request 777777 "'), "production")!;
  expect(blockTest(blockOf(["request 777776 done", "REQUEST 777777 DONE", null, "x 777777 y 777777 "]))).toEqual([1]);
  expect(blockTest(blockOf(["request 777776 done", null, "request 7777770"]))).toEqual([]);
});

test("a case-insensitive needle keeps every entry with a character beyond ASCII, as the Kelvin sign lowercases to k", () => {
  const blockTest = compileBlockTest(parseQuery("message~kelvin"), "production")!;
  expect(blockTest(blockOf(["\u212aelvin", "KELVIN", "kelvi n", "plain", "é", null]))).toEqual([0, 1, 4]);
  expect(blockTest(blockOf(["KELVIN", "plain"]))).toEqual([0]); // a block all ASCII: only what holds it
});

test("free words narrow to the messages holding all their words, and to every entry of an action holding them all", () => {
  const blockTest = compileBlockTest(parseQuery("connection timed"), "production")!;
  const block = blockOf(["Connection TIMED out", "connection reset", "timed", null, "x"], [], ["a", "a", "connection.timed", "connection.timed", "timed"]);
  expect(blockTest(block)).toEqual([0, 2, 3]); // entry 1 lacks "timed"; entries 2 and 3 have both words in their action
});

test("for path=, the block test leaves only the entries whose stored JSON holds a value as JSON writes it in a string", () => {
  const blockTest = compileBlockTest(parseQuery('metadata.order="a\\"b",500'), "production")!;
  const objects = [{ order: 'a"b' }, { n: 500 }, null, { n: "500" }, { m: 5000 }, { order: "ab" }];
  const block = blockOf(
    objects.map(() => null),
    objects,
  );
  expect(blockTest(block)).toEqual([0, 1, 3, 4]); // 5000 holds "500" too: a superset, which the entry's own check settles
  expect(compileBlockTest(parseQuery("metadata.order=ab"), "production")!(blockOf(["no objects"]))).toEqual([]);
});

test("there is no block test when a value has no ASCII piece or run of three characters, or for !~", () => {
  expect(compileBlockTest(parseQuery("message~ti"), "production")).toBeUndefined();
  expect(compileBlockTest(parseQuery('message~"timeout","ab"'), "production")).toBeUndefined(); // one value without a needle: any block may match it
  expect(compileBlockTest(parseQuery('message~"σίσυφος"'), "production")).toBeUndefined();
  expect(compileBlockTest(parseQuery('message!~"id 12345"'), "production")).toBeUndefined();
  expect(compileBlockTest(parseQuery("metadata.order!=ab"), "production")).toBeUndefined();
});

test("a term on the level, the action or a tag= narrows a block to exactly the entries it matches, by the block's dictionaries", () => {
  const LEVELS = ["debug", "info", "warn", "error", "fatal"] as const;
  const ACTIONS = ["order.paid", "Order.Failed", "pay", "user.login", "x"];
  const TAGS = ["a", "b", "region-2", "B"];
  const queries = [
    "level=warn",
    "level=warn,error",
    "level!=info",
    "action=order.paid",
    "action=ORDER.FAILED",
    "action~ord",
    "action~o*d",
    "action!~pay",
    "action@order",
    "action!=x",
    "tag=a",
    "tag=region-2,B",
    "level=warn tag=b action~order",
  ].map((q) => ({ q, query: parseQuery(q) }));
  fc.assert(
    fc.property(
      fc.array(fc.tuple(fc.constantFrom(...LEVELS), fc.constantFrom(...ACTIONS), fc.uniqueArray(fc.constantFrom(...TAGS), { maxLength: 3 })), {
        minLength: 1,
        maxLength: 12,
      }),
      (drafts) => {
        const ids = nextIds(drafts.length).ids;
        const entries = drafts.map(
          ([level, action, tags], i): Entry => ({
            id: ids[i],
            level,
            action,
            message: null,
            tags,
            clientMs: 0,
            actor: null,
            target: null,
            context: null,
            metadata: null,
          }),
        );
        const block = Block.decode(0, encodeBlock(entries));
        for (const { q, query } of queries) {
          const matching = entries.flatMap((entry, i) => (matchQuery(query, { serverMs: 0, entry }, "production") ? [i] : []));
          const left = compileBlockTest(query, "production")!(block) ?? entries.map((_, i) => i);
          expect({ q, left }).toEqual({ q, left: matching });
        }
      },
    ),
    { numRuns: 300 },
  );
});
