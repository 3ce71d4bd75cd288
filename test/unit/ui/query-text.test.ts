// The explorer's query text (src/ui/query-text.ts): what a click adds to a query is read back by the server's own
// parser (contract §6) as exactly the field and value clicked, whatever the value holds.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import type { PathTerm, TagTerm, TextTerm } from "../../../src/query/ast.ts";
import { parseQuery } from "../../../src/query/parser.ts";
import { highlights, marks, quote, termAt, terms, withTerm } from "../../../src/ui/query-text.ts";

const valuesOf = (t: PathTerm | TagTerm | TextTerm) => t.values.map((v) => (v.kind === "null" ? null : v.text));

describe("filter for / filter out", () => {
  test("a value of any text, filtered for or out on a path, parses back as that path, operator and value", () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.boolean(), (value, exclude) => {
        const q = withTerm("", "metadata.http.route", exclude, value);
        const [term] = parseQuery(q).terms as PathTerm[];
        expect(term.kind).toBe("path");
        expect(term.path).toEqual(["http", "route"]);
        expect(term.op).toBe(exclude ? "!=" : "=");
        expect(valuesOf(term)).toEqual([value]);
      }),
      { numRuns: 500 },
    );
  });

  test("null filters for a missing field, and the string null stays a string", () => {
    expect(withTerm("", "tag", false, null)).toBe("tag=null");
    const [t] = parseQuery(withTerm("", "tag", false, "null")).terms as TagTerm[];
    expect(valuesOf(t)).toEqual(["null"]);
  });

  test("terms already in the query are kept, the opposite term is replaced, and none is added twice", () => {
    expect(withTerm('level=error action~"pay*"', "tag", false, "a b")).toBe('level=error action~"pay*" tag="a b"');
    expect(withTerm("level=error tag!=x", "tag", false, "x")).toBe("level=error tag=x");
    expect(withTerm("tag=x", "tag", false, "x")).toBe("tag=x");
  });

  test("quote leaves plain words bare and quotes what the language would read otherwise", () => {
    expect(quote("checkout")).toBe("checkout");
    expect(quote("a b")).toBe('"a b"');
    expect(quote('say "hi"\\')).toBe('"say \\"hi\\"\\\\"');
    expect(quote("a=b")).toBe('"a=b"');
    expect(quote("x,y")).toBe('"x,y"');
  });
});

describe("terms, highlights and completion", () => {
  test("terms split on spaces outside quotes", () => {
    expect(terms('level=error  message~"disk full" timeout')).toEqual(["level=error", 'message~"disk full"', "timeout"]);
  });

  test("free words and text matches are highlighted, other facets are not", () => {
    expect(highlights('timeout message~"disk full" level=error tag=x action~"pay*"').sort()).toEqual(["disk full", "pay", "timeout"]);
  });

  test("marks split a text into marked and plain runs that join back to the text", () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.string({ minLength: 1, maxLength: 4 }), { maxLength: 3 }), (text, hl) => {
        const runs = marks(
          text,
          hl.map((h) => h.toLowerCase()),
        );
        expect(runs.map((r) => r.text).join("")).toBe(text);
      }),
    );
    expect(marks("Disk FULL now", ["disk full"])).toEqual([
      { text: "Disk FULL", mark: true },
      { text: " now", mark: false },
    ]);
  });

  test("termAt finds the term the cursor is in", () => {
    expect(termAt("level=error meta", 16)).toEqual({ start: 12, end: 16, text: "meta" });
    expect(termAt('message~"a b" x', 11)).toEqual({ start: 0, end: 13, text: 'message~"a ' });
    expect(termAt('message~"a b" x', 9)).toEqual({ start: 0, end: 13, text: 'message~"' });
  });
});
