// The explorer's state lives in the URL (contract §12): what is written is read back the same.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { DEFAULT_RANGE, RANGES, readState, type ViewState, windowOf, writeState } from "../../../src/ui/state.ts";

const state = fc.record<ViewState>({
  view: fc.constantFrom("logs", "rejections", "alerts"),
  q: fc.string(),
  range: fc.constantFrom(...RANGES.map((r) => r.value), "custom"),
  from: fc.constant(""),
  to: fc.constant(""),
  id: fc.oneof(fc.constant(""), fc.uuid()),
  live: fc.boolean(),
  fields: fc.array(fc.string({ minLength: 1, maxLength: 20 }), { maxLength: 3 }),
});

test("a view written to the URL reads back the same", () => {
  fc.assert(
    fc.property(state, fc.date({ noInvalidDate: true }), fc.date({ noInvalidDate: true }), (s, a, b) => {
      const v = s.range === "custom" ? { ...s, from: a.toISOString(), to: b.toISOString() } : s;
      expect(readState(writeState(v))).toEqual(v);
    }),
  );
});

test("the default view has an empty URL, and an unknown range falls back to the default", () => {
  expect(writeState(readState(""))).toBe("");
  expect(readState("?range=forever").range).toBe(DEFAULT_RANGE);
});

test("a relative range ends at the run's now, its to exclusive; all time has no start", () => {
  const now = Date.UTC(2026, 10, 24, 12);
  expect(windowOf(readState("?range=1h"), now)).toEqual({ fromMs: now + 1 - 3_600_000, toMs: now + 1 });
  expect(windowOf(readState("?range=all"), now)).toEqual({ fromMs: null, toMs: now + 1 });
});
