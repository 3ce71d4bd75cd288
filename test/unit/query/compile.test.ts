// The compiled predicate (compileQuery) accepts exactly what the reference matcher (match.ts) accepts.
import { expect, test } from "bun:test";
import fc from "fast-check";
import type { Query } from "../../../src/query/ast.ts";
import { compileQuery } from "../../../src/query/compile.ts";
import { matchQuery } from "../../../src/query/match.ts";
import type { Entry, Row } from "../../../src/storage/entries.ts";
import { words } from "../../../src/words.ts";

const row = (action: string, message: string | null): Row => ({
  serverMs: 0,
  entry: { id: "", level: "info", action, message, tags: [], clientMs: 0, actor: null, target: null, context: null, metadata: null } as Entry,
});

// pieces that put a word's letters next to other letters, digits, marks and case changes (ASCII and beyond)
const PIECES = ["ab", "ba", "a", "b", "AB", "1", " ", "-", "_", ".", "é", "É", "σ", "Σ", "\u212a", "k"];
const textArb = fc.array(fc.constantFrom(...PIECES), { maxLength: 10 }).map((xs) => xs.join(""));
const wordArb = fc.constantFrom("ab", "ba", "a", "b", "abab", "ab1", "1", "é", "σ", "k");

test("free words and message@ match whole words only, in ASCII text and beyond, as the reference matcher does", () => {
  fc.assert(
    fc.property(textArb, textArb, fc.array(wordArb, { minLength: 1, maxLength: 3 }), fc.boolean(), (action, message, need, free) => {
      const text = need.join(" ");
      const query: Query = {
        terms: [
          free
            ? { kind: "free", text, words: words(text), pos: 0 }
            : { kind: "text", facet: "message", op: "@", values: [{ kind: "string", text, pos: 0 }], pos: 0 },
        ],
      };
      const r = row(action, message);
      expect(compileQuery(query, "production")(r)).toBe(matchQuery(query, r, "production"));
    }),
    { numRuns: 3000 },
  );
});

test("a word inside a longer word is not that word: `login` is not in `relogin logins`", () => {
  const query: Query = { terms: [{ kind: "free", text: "login", words: ["login"], pos: 0 }] };
  expect(compileQuery(query, "production")(row("x", "relogin logins"))).toBe(false);
  expect(compileQuery(query, "production")(row("x", "relogin LOGIN-ok"))).toBe(true);
});
