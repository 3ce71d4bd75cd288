// Contract §11, the mapping rules common to all protocols: the level table, dotted keys stored nested, Loki labels,
// and the OTLP decoder's size and nesting bound, which must never be below the entry's real JSON size and nesting.
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { levelOf, levelOfName, levelOfOtel, levelOfPino, levelOfSyslog } from "../../../../src/ingest/protocols/levels.ts";
import { parseLabels } from "../../../../src/ingest/protocols/loki.ts";
import { nestDotted } from "../../../../src/ingest/protocols/nest.ts";
import { decodeOtlp } from "../../../../src/ingest/protocols/otlp.ts";

describe("the level table", () => {
  test("OTel severityNumber 1–4 trace, 5–8 debug, 9–12 and 0 info, 13–16 warn, 17–20 error, 21–24 fatal", () => {
    const got = Array.from({ length: 25 }, (_, n) => levelOfOtel(n));
    expect(got).toEqual([
      "info",
      ...Array(4).fill("trace"),
      ...Array(4).fill("debug"),
      ...Array(4).fill("info"),
      ...Array(4).fill("warn"),
      ...Array(4).fill("error"),
      ...Array(4).fill("fatal"),
    ]);
    expect(levelOfOtel(25)).toBeUndefined();
  });
  test("syslog severity 7 debug, 6 and 5 info, 4 warn, 3 error, 2, 1 and 0 fatal", () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map(levelOfSyslog)).toEqual(["fatal", "fatal", "fatal", "error", "warn", "info", "info", "debug"]);
  });
  test("names map case-insensitively; anything else is no level (the caller's info)", () => {
    const table: Record<string, string[]> = {
      trace: ["trace", "VERBOSE"],
      debug: ["debug", "Dbug"],
      info: ["info", "information", "Informational", "NOTICE"],
      warn: ["warn", "Warning"],
      error: ["ERROR", "err", "eror"],
      fatal: ["fatal", "critical", "crit", "alert", "emerg", "emergency", "PANIC"],
    };
    for (const [level, names] of Object.entries(table)) for (const n of names) expect(levelOfName(n)).toBe(level as never);
    for (const n of ["loud", "", "__proto__", "toString"]) expect(levelOfName(n)).toBeUndefined();
  });
  test("pino's numbers 10–60 map to trace…fatal, as numbers or text", () => {
    expect([10, 20, 30, 40, 50, 60].map(levelOfPino)).toEqual(["trace", "debug", "info", "warn", "error", "fatal"]);
    expect(levelOf("50")).toBe("error");
    expect(levelOf(35)).toBeUndefined();
  });
});

describe("dotted keys stored nested", () => {
  test("a dotted key becomes nested objects and merges with its siblings", () => {
    expect(nestDotted({ "http.status_code": 200, "http.method": "GET", user: "u" })).toEqual({ http: { status_code: 200, method: "GET" }, user: "u" });
  });
  test("a key that would nest into an existing non-object value is kept whole, in either order", () => {
    expect(nestDotted({ http: 5, "http.code": 1 })).toEqual({ http: 5, "http.code": 1 });
    expect(nestDotted({ "http.code": 1, http: 5 })).toEqual({ http: 5, "http.code": 1 });
    expect(nestDotted({ "a..b": 1, ".c": 2 })).toEqual({ "a..b": 1, ".c": 2 });
  });
  test("an object value and dotted keys into it merge", () => {
    expect(nestDotted({ "a.b": 1, a: { c: 2 } })).toEqual({ a: { b: 1, c: 2 } });
  });
  test("__proto__ is an own key, never the prototype", () => {
    const out = nestDotted(JSON.parse('{"__proto__.x": 1, "a.__proto__": {"y": 2}}'));
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).x).toBeUndefined();
    expect(JSON.stringify(out)).toBe('{"__proto__":{"x":1},"a":{"__proto__":{"y":2}}}');
  });
});

describe("Loki stream labels", () => {
  test("a Prometheus label set with escapes", () => {
    expect(parseLabels('{job="api", msg="say \\"hi\\"\\n", empty=""}')).toEqual({ job: "api", msg: 'say "hi"\n', empty: "" });
    expect(parseLabels("{}")).toEqual({});
  });
  test("anything else is a reason, not a throw", () => {
    for (const bad of ['job="api"', "{job=api}", '{job="api"', '{job="api"} x', "{=1}"]) expect(typeof parseLabels(bad)).toBe("string");
  });
});

/** depthOf is how deeply a JSON value nests, the value itself being 1 when it is an object or array. */
function depthOf(v: unknown): number {
  if (typeof v !== "object" || v === null) return 0;
  let d = 0;
  for (const c of Object.values(v)) d = Math.max(d, depthOf(c));
  return d + 1;
}

const key = fc.oneof(fc.string({ maxLength: 8 }), fc.constantFrom("a.b", "a", "a.b.c", "x..y", "\u0000.\u001f", "é.ü", "__proto__"));
const anyValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.record({ stringValue: fc.string({ unit: "binary", maxLength: 20 }) }),
    fc.record({ intValue: fc.oneof(fc.integer(), fc.constant("9223372036854775807"), fc.constant("-12")) }),
    fc.record({ doubleValue: fc.oneof(fc.double(), fc.constantFrom("NaN", "Infinity")) }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ bytesValue: fc.base64String({ maxLength: 12 }) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie("value"), { maxLength: 3 }) }) }),
    fc.record({ kvlistValue: fc.record({ values: fc.array(fc.record({ key, value: tie("value") }), { maxLength: 3 }) }) }),
  ),
})).value;
const attributes = fc.array(fc.record({ key, value: anyValue }), { maxLength: 40 });

test("the OTLP decoder's bound is never below an entry's JSON size in UTF-8 bytes nor its nesting", () => {
  fc.assert(
    fc.property(
      attributes,
      attributes,
      fc.option(anyValue),
      fc.string({ unit: "binary", maxLength: 10 }),
      fc.string({ unit: "binary", maxLength: 10 }),
      (resource, attrs, body, scope, eventName) => {
        const request = {
          resourceLogs: [
            {
              resource: { attributes: resource },
              scopeLogs: [
                { scope: { name: scope, version: "1" }, logRecords: [{ attributes: attrs, body: body ?? undefined, eventName, traceId: "ab", spanId: "cd" }] },
              ],
            },
          ],
        };
        for (const item of decodeOtlp(Buffer.from(JSON.stringify(request)), true, 0)) {
          if (!item.entry) continue;
          expect(item.bound!.size).toBeGreaterThanOrEqual(Buffer.byteLength(JSON.stringify(item.entry)));
          for (const f of ["context", "metadata"]) expect(item.bound!.nesting).toBeGreaterThanOrEqual(depthOf(item.entry[f]));
        }
      },
    ),
    { numRuns: 500 },
  );
});
