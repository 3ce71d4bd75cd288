// Entry rules of contract §4, one row per rule and boundary, checked against checkEntry directly.
import { test, expect, describe } from "bun:test";
import fc from "fast-check";
import { checkEntry, deeperThan, unknownFields } from "../../../src/ingest/rules.ts";
import { BUILT_IN_PLANS, type Plan } from "../../../src/limits/plans.ts";

const UNLIMITED = BUILT_IN_PLANS.find((p) => p.code === "unlimited")!;
const FREE = BUILT_IN_PLANS.find((p) => p.code === "free")!;
const OBJECT_FIELDS = ["actor", "target", "context", "metadata"] as const;
const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;

const TS = "2026-11-22T10:00:00.000Z";
const TS_MS = Date.UTC(2026, 10, 22, 10, 0, 0, 0);
const valid = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  action: "user.login",
  level: "info",
  clientTimestamp: TS,
  ...extra,
});

/** fieldsOf lists the fields of the errors checkEntry reports, in report order. */
const fieldsOf = (raw: unknown, plan: Plan = UNLIMITED) => checkEntry(raw, null, plan).errors.map((e) => e.field);

/** bytes is the UTF-8 length, computed apart from the code under test. */
const bytes = (s: string) => Buffer.byteLength(s, "utf8");

/** nest builds a JSON object of exactly `depth` levels; `shape` decides where arrays go. */
function nest(depth: number, shape: "objects" | "alternating" | "innermost-array"): Record<string, unknown> {
  let v: unknown = "leaf";
  for (let level = depth; level >= 1; level--) {
    const array = level > 1 && (shape === "alternating" ? level % 2 === 0 : shape === "innermost-array" ? level === depth : false);
    v = array ? [v] : { k: v };
  }
  return v as Record<string, unknown>;
}

/** padBytes is text of exactly n UTF-8 bytes made mostly of `ch`, topped up with ASCII. */
function padBytes(n: number, ch: string): string {
  const b = bytes(ch);
  return ch.repeat(Math.floor(n / b)) + "a".repeat(n % b);
}

/** sized is a valid entry whose JSON is exactly `size` UTF-8 bytes, padded in message. */
function sized(size: number, ch: string): Record<string, unknown> {
  const base = bytes(JSON.stringify(valid({ message: "" })));
  return valid({ message: padBytes(size - base, ch) });
}

describe("checkEntry: a valid entry", () => {
  test("minimal entry passes and is normalised with defaults (message null, tags [], objects null)", () => {
    const r = checkEntry(valid(), null, UNLIMITED);
    expect(r.errors).toEqual([]);
    expect(unknownFields(valid())).toEqual([]);
    expect(r.entry).toEqual({
      environment: undefined,
      level: "info",
      action: "user.login",
      message: null,
      tags: [],
      actor: null,
      target: null,
      context: null,
      metadata: null,
      clientMs: TS_MS,
    });
  });

  test("clientMs equals the instant of clientTimestamp, offset applied", () => {
    const r = checkEntry(valid({ clientTimestamp: "2026-11-22T10:00:00.123456+01:00" }), null, UNLIMITED);
    expect(r.errors).toEqual([]);
    expect(r.entry!.clientMs).toBe(Date.UTC(2026, 10, 22, 9, 0, 0, 123));
  });

  test("given fields are kept as sent", () => {
    const raw = valid({
      environment: "staging",
      message: "hello",
      tags: ["a", "b"],
      actor: { id: "u1" },
      target: { id: "t1", list: [1, 2] },
      context: { ip: "10.0.0.1" },
      metadata: { n: 1, nested: { x: true } },
    });
    const r = checkEntry(raw, null, UNLIMITED);
    expect(r.errors).toEqual([]);
    expect(r.entry).toEqual({
      environment: "staging",
      level: "info",
      action: "user.login",
      message: "hello",
      tags: ["a", "b"],
      actor: { id: "u1" },
      target: { id: "t1", list: [1, 2] },
      context: { ip: "10.0.0.1" },
      metadata: { n: 1, nested: { x: true } },
      clientMs: TS_MS,
    });
  });

  test("an invalid entry has no normalised entry", () => {
    expect(checkEntry(valid({ level: "nope" }), null, UNLIMITED).entry).toBeUndefined();
  });
});

// Each row: name (says the rule), the entry's changed fields, and the expected error fields ([] = valid).
type Row = [name: string, change: Record<string, unknown>, expected: string[]];

function runRows(rows: Row[]) {
  for (const [name, change, expected] of rows) {
    test(name, () => {
      const raw = valid();
      for (const [k, v] of Object.entries(change)) {
        if (v === undefined) delete raw[k];
        else raw[k] = v;
      }
      expect(fieldsOf(raw)).toEqual(expected);
    });
  }
}

describe("checkEntry: action is a required string of 1–255 characters once trimmed", () => {
  runRows([
    ["action missing is rejected", { action: undefined }, ["action"]],
    ["action null is rejected", { action: null }, ["action"]],
    ["action as a number is rejected", { action: 42 }, ["action"]],
    ["action as an object is rejected", { action: { a: 1 } }, ["action"]],
    ["action empty string is rejected", { action: "" }, ["action"]],
    ["action of only spaces is rejected", { action: "   " }, ["action"]],
    ["action of only tabs and newlines is rejected", { action: "\t\n \r" }, ["action"]],
    ["action of 1 character is accepted", { action: "a" }, []],
    ["action of exactly 255 characters is accepted", { action: "x".repeat(255) }, []],
    ["action of 256 characters is rejected", { action: "x".repeat(256) }, ["action"]],
    ["action of 255 characters plus surrounding spaces is accepted (white space not counted)", { action: `  ${"x".repeat(255)}\t ` }, []],
    ["action of 256 characters plus surrounding spaces is rejected", { action: ` ${"x".repeat(256)} ` }, ["action"]],
    ["action with inner spaces counts them", { action: `x${" ".repeat(253)}x` }, []],
    ["action of 256 characters with inner spaces is rejected", { action: `x${" ".repeat(254)}x` }, ["action"]],
    ["action of one character inside white space is accepted", { action: "  a  " }, []],
  ]);

  test("action is stored as sent, surrounding white space included", () => {
    const action = "  user.login \t";
    expect(checkEntry(valid({ action }), null, UNLIMITED).entry!.action).toBe("  user.login \t");
  });
});

describe("checkEntry: level is exactly one of the six lowercase levels", () => {
  for (const level of LEVELS) {
    test(`level "${level}" is accepted`, () => {
      const r = checkEntry(valid({ level }), null, UNLIMITED);
      expect(r.errors).toEqual([]);
      expect(r.entry!.level).toBe(level);
    });
  }
  runRows([
    ["level missing is rejected", { level: undefined }, ["level"]],
    ["level uppercase INFO is rejected", { level: "INFO" }, ["level"]],
    ["level capitalised Error is rejected", { level: "Error" }, ["level"]],
    ["level with surrounding space is rejected", { level: " info" }, ["level"]],
    ["level warning (not a level) is rejected", { level: "warning" }, ["level"]],
    ["level empty string is rejected", { level: "" }, ["level"]],
    ["level null is rejected", { level: null }, ["level"]],
    ["level as a number is rejected", { level: 3 }, ["level"]],
  ]);
});

describe("checkEntry: clientTimestamp is a required RFC 3339 date-time with a time zone", () => {
  runRows([
    ["clientTimestamp with Z is accepted", { clientTimestamp: "2026-11-22T10:00:00Z" }, []],
    ["clientTimestamp with milliseconds and Z is accepted", { clientTimestamp: "2026-11-22T10:00:00.123Z" }, []],
    ["clientTimestamp with nanoseconds is accepted", { clientTimestamp: "2026-11-22T10:00:00.123456789Z" }, []],
    ["clientTimestamp with +hh:mm is accepted", { clientTimestamp: "2026-11-22T10:00:00+02:00" }, []],
    ["clientTimestamp with -hh:mm is accepted", { clientTimestamp: "2026-11-22T10:00:00-05:30" }, []],
    ["clientTimestamp with lowercase t and z is accepted", { clientTimestamp: "2026-11-22t10:00:00z" }, []],
    ["clientTimestamp without a zone is rejected", { clientTimestamp: "2026-11-22T10:00:00" }, ["clientTimestamp"]],
    ["clientTimestamp with fraction but no zone is rejected", { clientTimestamp: "2026-11-22T10:00:00.123" }, ["clientTimestamp"]],
    ["clientTimestamp date only is rejected", { clientTimestamp: "2026-11-22" }, ["clientTimestamp"]],
    ["clientTimestamp with a space instead of T is rejected", { clientTimestamp: "2026-11-22 10:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp with offset without colon is rejected", { clientTimestamp: "2026-11-22T10:00:00+0200" }, ["clientTimestamp"]],
    ["clientTimestamp with hour-only offset is rejected", { clientTimestamp: "2026-11-22T10:00:00+02" }, ["clientTimestamp"]],
    ["clientTimestamp without seconds is rejected", { clientTimestamp: "2026-11-22T10:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp Feb 29 in a leap year is accepted", { clientTimestamp: "2024-02-29T12:00:00Z" }, []],
    ["clientTimestamp Feb 29 in year 2000 (divisible by 400) is accepted", { clientTimestamp: "2000-02-29T12:00:00Z" }, []],
    ["clientTimestamp Feb 29 in a non-leap year is rejected", { clientTimestamp: "2023-02-29T12:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp Feb 29 in 1900 (century, not leap) is rejected", { clientTimestamp: "1900-02-29T12:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp Feb 30 is rejected", { clientTimestamp: "2024-02-30T12:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp April 31 is rejected", { clientTimestamp: "2026-04-31T12:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp month 13 is rejected", { clientTimestamp: "2026-13-01T12:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp hour 24 is rejected", { clientTimestamp: "2026-11-22T24:00:00Z" }, ["clientTimestamp"]],
    ["clientTimestamp as epoch number is rejected", { clientTimestamp: 1_795_000_000_000 }, ["clientTimestamp"]],
    ["clientTimestamp missing is rejected", { clientTimestamp: undefined }, ["clientTimestamp"]],
    ["clientTimestamp null is rejected", { clientTimestamp: null }, ["clientTimestamp"]],
    ["clientTimestamp free text is rejected", { clientTimestamp: "yesterday" }, ["clientTimestamp"]],
  ]);
});

describe("checkEntry: environment is optional and one of the environments", () => {
  runRows([
    ["environment production is accepted", { environment: "production" }, []],
    ["environment absent is accepted", { environment: undefined }, []],
    ["environment that is no environment is an error on field environment", { environment: "prod" }, ["environment"]],
  ]);
});

describe("checkEntry: message is an optional string or null", () => {
  runRows([
    ["message string is accepted", { message: "hello" }, []],
    ["message empty string is accepted", { message: "" }, []],
    ["message null is accepted", { message: null }, []],
    ["message as a number is rejected", { message: 42 }, ["message"]],
    ["message as an object is rejected", { message: { text: "x" } }, ["message"]],
    ["message as a boolean is rejected", { message: true }, ["message"]],
  ]);

  test("message null and absent both normalise to null; a string is kept", () => {
    expect(checkEntry(valid({ message: null }), null, UNLIMITED).entry!.message).toBeNull();
    expect(checkEntry(valid(), null, UNLIMITED).entry!.message).toBeNull();
    expect(checkEntry(valid({ message: "hi" }), null, UNLIMITED).entry!.message).toBe("hi");
  });
});

describe("checkEntry: tags is an optional array of 1–64-character strings", () => {
  runRows([
    ["tags with one tag is accepted", { tags: ["a"] }, []],
    ["tags empty array is accepted", { tags: [] }, []],
    ["tag of exactly 64 characters is accepted", { tags: ["t".repeat(64)] }, []],
    ["tag of 65 characters is rejected", { tags: ["t".repeat(65)] }, ["tags.0"]],
    ["tags as a string is rejected", { tags: "a,b" }, ["tags"]],
    ["tags as an object is rejected", { tags: { a: 1 } }, ["tags"]],
  ]);

  // A bad element is reported on its dotted path tags.<index>.
  const element: [string, unknown[]][] = [
    ["empty-string tag is rejected", ["a", ""]],
    ["numeric tag is rejected", ["a", 1]],
    ["null tag is rejected", ["a", null]],
    ["65-character tag among good ones is rejected", ["a", "t".repeat(65)]],
  ];
  for (const [name, tags] of element) {
    test(name, () => {
      const errors = checkEntry(valid({ tags }), null, UNLIMITED).errors;
      expect(errors.length).toBe(1);
      expect(errors[0].field).toBe("tags.1");
    });
  }

  test("duplicate tags are removed, first-seen order kept", () => {
    const r = checkEntry(valid({ tags: ["b", "a", "b", "c", "a", "b"] }), null, UNLIMITED);
    expect(r.errors).toEqual([]);
    expect(r.entry!.tags).toEqual(["b", "a", "c"]);
  });

  test("tags differing only by case are distinct", () => {
    expect(checkEntry(valid({ tags: ["A", "a"] }), null, UNLIMITED).entry!.tags).toEqual(["A", "a"]);
  });

  for (const plan of BUILT_IN_PLANS) {
    const distinct = (n: number) => Array.from({ length: n }, (_, i) => `tag${i}`);
    test(`${plan.code}: exactly max_tags (${plan.max_tags}) distinct tags are accepted`, () => {
      const r = checkEntry(valid({ tags: distinct(plan.max_tags) }), null, plan);
      expect(r.errors).toEqual([]);
      expect(r.entry!.tags.length).toBe(plan.max_tags);
    });
    test(`${plan.code}: max_tags + 1 (${plan.max_tags + 1}) distinct tags are rejected on field tags`, () => {
      expect(fieldsOf(valid({ tags: distinct(plan.max_tags + 1) }), plan)).toEqual(["tags"]);
    });
    test(`${plan.code}: max_tags + 1 items with one duplicate are accepted (dedup before the limit)`, () => {
      const tags = distinct(plan.max_tags);
      tags.splice(1, 0, tags[0]); // tag0, tag0, tag1, …
      expect(tags.length).toBe(plan.max_tags + 1);
      const r = checkEntry(valid({ tags }), null, plan);
      expect(r.errors).toEqual([]);
      expect(r.entry!.tags).toEqual(distinct(plan.max_tags));
    });
  }
});

describe("checkEntry: actor, target, context, metadata are JSON objects or null", () => {
  for (const f of OBJECT_FIELDS) {
    runRows([
      [`${f} object is accepted`, { [f]: { a: 1 } }, []],
      [`${f} empty object is accepted`, { [f]: {} }, []],
      [`${f} null is accepted`, { [f]: null }, []],
      [`${f} array is rejected`, { [f]: [{ a: 1 }] }, [f]],
      [`${f} empty array is rejected`, { [f]: [] }, [f]],
      [`${f} string is rejected`, { [f]: "x" }, [f]],
      [`${f} number is rejected`, { [f]: 1 }, [f]],
      [`${f} boolean is rejected`, { [f]: false }, [f]],
    ]);
    test(`${f} absent or null normalises to null`, () => {
      expect(checkEntry(valid(), null, UNLIMITED).entry![f]).toBeNull();
      expect(checkEntry(valid({ [f]: null }), null, UNLIMITED).entry![f]).toBeNull();
    });
  }
});

describe("checkEntry: nesting depth of each object at most the plan's metadata depth", () => {
  const shapes = ["objects", "alternating", "innermost-array"] as const;
  for (const plan of BUILT_IN_PLANS) {
    const d = plan.max_metadata_depth;
    for (const f of OBJECT_FIELDS) {
      for (const shape of shapes) {
        test(`${plan.code}: ${f} of depth ${d} (${shape}) is accepted`, () => {
          expect(fieldsOf(valid({ [f]: nest(d, shape) }), plan)).toEqual([]);
        });
        test(`${plan.code}: ${f} of depth ${d + 1} (${shape}) is rejected on field ${f}`, () => {
          expect(fieldsOf(valid({ [f]: nest(d + 1, shape) }), plan)).toEqual([f]);
        });
      }
    }
  }

  test("an empty nested object counts as a level", () => {
    expect(fieldsOf(valid({ metadata: { a: { b: {} } } }), FREE)).toEqual([]);
    expect(fieldsOf(valid({ metadata: { a: { b: { c: {} } } } }), FREE)).toEqual(["metadata"]);
  });

  test("an empty nested array counts as a level", () => {
    expect(fieldsOf(valid({ metadata: { a: { b: [] } } }), FREE)).toEqual([]);
    expect(fieldsOf(valid({ metadata: { a: { b: [[]] } } }), FREE)).toEqual(["metadata"]);
  });

  test("the deepest branch decides, not the first", () => {
    const metadata = { shallow: 1, also: { x: 1 }, deep: { a: { b: { c: 1 } } } }; // depth 4
    expect(fieldsOf(valid({ metadata }), FREE)).toEqual(["metadata"]);
  });

  test("an entry nested 100,000 levels deep gets a depth error, not a thrown stack overflow", () => {
    let deep: unknown = [];
    for (let i = 0; i < 99_999; i++) deep = [deep];
    let fields: string[] = [];
    expect(() => {
      fields = checkEntry(valid({ metadata: { deep } }), 0, UNLIMITED).errors.map((e) => e.field);
    }).not.toThrow();
    expect(fields).toContain("metadata");
  });
});

describe("checkEntry: UTF-8 size of JSON.stringify(entry as received) at most max_log_size", () => {
  const pads: [string, string][] = [
    ["ASCII", "a"],
    ["é (2 bytes)", "é"],
    ["€ (3 bytes)", "€"],
    ["emoji (4 bytes)", "😀"],
  ];
  for (const plan of BUILT_IN_PLANS) {
    for (const [label, ch] of pads) {
      test(`${plan.code}: entry of exactly ${plan.max_log_size} bytes padded with ${label} is accepted`, () => {
        const raw = sized(plan.max_log_size, ch);
        const json = JSON.stringify(raw);
        expect(bytes(json)).toBe(plan.max_log_size);
        if (ch !== "a") expect(json.length).toBeLessThan(plan.max_log_size); // the boundary is in bytes
        expect(fieldsOf(raw, plan)).toEqual([]);
      });
      test(`${plan.code}: entry of ${plan.max_log_size + 1} bytes padded with ${label} is rejected on field ""`, () => {
        const raw = sized(plan.max_log_size + 1, ch);
        const json = JSON.stringify(raw);
        expect(bytes(json)).toBe(plan.max_log_size + 1);
        if (ch !== "a") expect(json.length).toBeLessThanOrEqual(plan.max_log_size); // fits in characters, not in bytes
        expect(fieldsOf(raw, plan)).toEqual([""]);
      });
    }
  }

  test("size is of the entry as received: defaults filled in later do not count", () => {
    // No message/tags/objects: filling defaults would add bytes, yet exactly max_log_size passes.
    const base = bytes(JSON.stringify(valid({ metadata: { p: "" } })));
    const raw = valid({ metadata: { p: "m".repeat(FREE.max_log_size - base) } });
    expect(bytes(JSON.stringify(raw))).toBe(FREE.max_log_size);
    const r = checkEntry(raw, null, FREE);
    expect(r.errors).toEqual([]);
    const filled = { ...raw, message: r.entry!.message, tags: r.entry!.tags, actor: null, target: null, context: null };
    expect(bytes(JSON.stringify(filled))).toBeGreaterThan(FREE.max_log_size);
  });

  test("unknown fields count toward the size (the entry as received)", () => {
    const base = bytes(JSON.stringify(valid({ pad: "" })));
    const ok = valid({ pad: "p".repeat(FREE.max_log_size - base) });
    const over = valid({ pad: "p".repeat(FREE.max_log_size - base + 1) });
    expect(fieldsOf(ok, FREE)).toEqual([]);
    expect(fieldsOf(over, FREE)).toEqual([""]);
  });

  test("JSON escapes count as sent by JSON.stringify (a quote is 2 bytes)", () => {
    const base = bytes(JSON.stringify(valid({ message: "" })));
    const n = FREE.max_log_size - base; // even: n/2 quotes fill it exactly when n is even
    const quotes = '"'.repeat(Math.floor(n / 2)) + "a".repeat(n % 2);
    expect(bytes(JSON.stringify(valid({ message: quotes })))).toBe(FREE.max_log_size);
    expect(fieldsOf(valid({ message: quotes }), FREE)).toEqual([]);
    expect(fieldsOf(valid({ message: `${quotes}"` }), FREE)).toEqual([""]);
  });
});

describe("checkEntry: bounds from the body's scan change no verdict", () => {
  test("given any bounds at least the entry's size and nesting, the errors are those of the exact rules (3,000 cases)", () => {
    const plans = fc.constantFrom(...BUILT_IN_PLANS);
    const shapes = fc.constantFrom<"objects" | "alternating" | "innermost-array">("objects", "alternating", "innermost-array");
    fc.assert(
      fc.property(
        plans,
        fc.constantFrom("a", "é", "😀", '"'),
        fc.nat({ max: 2_500 }),
        fc.nat({ max: 3_000 }),
        fc.integer({ min: 1, max: 12 }),
        shapes,
        fc.nat({ max: 3 }),
        (plan, ch, n, slack, depth, shape, deeper) => {
          const raw = valid({ message: ch.repeat(n), metadata: nest(depth, shape), context: { n: slack } });
          const size = bytes(JSON.stringify(raw));
          const exact = checkEntry(raw, 0, plan);
          expect(checkEntry(raw, 0, plan, { size: size + slack, nesting: depth + deeper, surrogates: true })).toEqual(exact);
          expect(checkEntry(raw, 0, plan, { size: Infinity, nesting: Infinity, surrogates: true })).toEqual(exact);
        },
      ),
      { numRuns: 3_000 },
    );
  });
});

describe("checkEntry: unknown top-level fields are ignored and reported", () => {
  test("unknown fields pass, are listed by unknownFields and are not in the entry", () => {
    const raw = valid({ foo: 1, Level: "x", nested: { a: 1 } });
    const r = checkEntry(raw, null, UNLIMITED);
    expect(r.errors).toEqual([]);
    expect(unknownFields(raw)).toEqual(["foo", "Level", "nested"]);
    expect(Object.keys(r.entry!).sort()).toEqual(["action", "actor", "clientMs", "context", "environment", "level", "message", "metadata", "tags", "target"]);
  });

  test("known fields are never reported as unknown", () => {
    const raw = valid({ environment: "development", message: "m", tags: ["t"], actor: {}, target: {}, context: {}, metadata: {} });
    expect(checkEntry(raw, null, UNLIMITED).errors).toEqual([]);
    expect(unknownFields(raw)).toEqual([]);
  });
});

describe('checkEntry: a non-object entry gives one error with field ""', () => {
  const rows: [string, unknown][] = [
    ["number", 42],
    ["string", "user.login"],
    ["array", [valid()]],
    ["empty array", []],
    ["null", null],
    ["boolean", true],
  ];
  for (const [name, raw] of rows) {
    test(`${name} entry is one error on field "" carrying log_index`, () => {
      const r = checkEntry(raw, 5, UNLIMITED);
      expect(r.entry).toBeUndefined();
      expect(r.errors.length).toBe(1);
      expect(r.errors[0].field).toBe("");
      expect(r.errors[0].log_index).toBe(5);
      expect(typeof r.errors[0].message).toBe("string");
      expect(r.errors[0].message.length).toBeGreaterThan(0);
    });
  }
});

describe("checkEntry: every problem is listed, each with the given log_index", () => {
  test("every bad field of the schema gives one error each", () => {
    const raw = {
      action: 5,
      level: "INFO",
      clientTimestamp: "nope",
      environment: "nowhere",
      message: 3,
      tags: "x",
      actor: [],
      target: 1,
      context: "c",
      metadata: true,
    };
    const r = checkEntry(raw, 7, UNLIMITED);
    expect(r.errors.map((e) => e.field).sort()).toEqual([
      "action",
      "actor",
      "clientTimestamp",
      "context",
      "environment",
      "level",
      "message",
      "metadata",
      "tags",
      "target",
    ]);
    for (const e of r.errors) expect(e.log_index).toBe(7);
  });

  test("every rule beyond the schema gives one error each (trim, calendar, tag count, depth, size)", () => {
    const raw = {
      action: "   ",
      level: "info",
      clientTimestamp: "2026-02-30T10:00:00Z",
      tags: ["a", "b", "c", "d", "e", "f"],
      metadata: { a: { b: { c: {} } } },
      pad: "p".repeat(FREE.max_log_size),
    };
    const r = checkEntry(raw, 0, FREE);
    expect(r.errors.map((e) => e.field).sort()).toEqual(["", "action", "clientTimestamp", "metadata", "tags"]);
    for (const e of r.errors) expect(e.log_index).toBe(0);
  });

  test("a schema failure and a rule failure are both listed", () => {
    expect(fieldsOf({ action: " ", level: "LOUD", clientTimestamp: TS }).sort()).toEqual(["action", "level"]);
  });

  test("all four object fields too deep give four errors", () => {
    const deep = nest(FREE.max_metadata_depth + 1, "objects");
    const raw = valid({ actor: deep, target: deep, context: deep, metadata: deep });
    expect(fieldsOf(raw, FREE).sort()).toEqual(["actor", "context", "metadata", "target"]);
  });

  test("log_index null is carried on every error", () => {
    const r = checkEntry({ action: "", level: "x" }, null, UNLIMITED);
    expect(r.errors.length).toBe(3); // action, level, clientTimestamp
    for (const e of r.errors) expect(e.log_index).toBeNull();
  });

  test("log_index number is carried on every error", () => {
    const r = checkEntry({ action: "", level: "x" }, 9999, UNLIMITED);
    expect(r.errors.length).toBe(3);
    for (const e of r.errors) expect(e.log_index).toBe(9999);
  });

  test("each error says something (non-empty message)", () => {
    for (const e of checkEntry({ tags: [""] }, 1, UNLIMITED).errors) expect(e.message.length).toBeGreaterThan(0);
  });
});

describe("deeperThan: the value itself is depth 1, each nested object or array adds one", () => {
  const rows: [string, unknown, number, boolean][] = [
    ["empty object is depth 1: not deeper than 1", {}, 1, false],
    ["empty object is depth 1: deeper than 0", {}, 0, true],
    ["empty array is depth 1: not deeper than 1", [], 1, false],
    ["scalars add no level", { a: 1, b: "s", c: null, d: true }, 1, false],
    ["scalars in an array add no level", [1, "s", null, false], 1, false],
    ["object in object is depth 2: deeper than 1", { a: {} }, 1, true],
    ["object in object is depth 2: not deeper than 2", { a: {} }, 2, false],
    ["array in object is depth 2: deeper than 1", { a: [] }, 1, true],
    ["array in object is depth 2: not deeper than 2", { a: [] }, 2, false],
    ["arrays nest like objects: [[[]]] is depth 3, deeper than 2", [[[]]], 2, true],
    ["arrays nest like objects: [[[]]] is depth 3, not deeper than 3", [[[]]], 3, false],
    ["object in array in object is depth 3", { a: [{ b: 1 }] }, 2, true],
    ["object in array in object is depth 3 (limit 3)", { a: [{ b: 1 }] }, 3, false],
    ["the deepest branch counts", { x: 1, y: { z: 1 }, w: { v: { u: [] } } }, 3, true],
    ["the deepest branch counts (limit 4)", { x: 1, y: { z: 1 }, w: { v: { u: [] } } }, 4, false],
    ["a late deep branch after many shallow ones counts", [1, 2, 3, {}, [], [[]], [[[{}]]]], 4, true],
  ];
  for (const [name, value, limit, expected] of rows) {
    test(name, () => expect(deeperThan(value, limit)).toBe(expected));
  }

  test("100,000 nested arrays: exact boundary, no stack overflow", () => {
    let v: unknown = [];
    for (let i = 1; i < 100_000; i++) v = [v]; // depth 100,000
    expect(deeperThan(v, 99_999)).toBe(true);
    expect(deeperThan(v, 100_000)).toBe(false);
    expect(deeperThan(v, 10)).toBe(true);
  });

  test("100,000 nested objects: exact boundary, no stack overflow", () => {
    let v: unknown = {};
    for (let i = 1; i < 100_000; i++) v = { k: v };
    expect(deeperThan(v, 99_999)).toBe(true);
    expect(deeperThan(v, 100_000)).toBe(false);
  });
});
