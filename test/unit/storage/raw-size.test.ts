// Raw size (storage/format/raw-size.ts): a text's JSON is counted, not made, where that is exact.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { jsonBytes } from "../../../src/storage/format/raw-size.ts";

test("jsonBytes is the UTF-8 length of a text's JSON, for any text: quotes, backslashes, controls, DEL, beyond ASCII", () => {
  const unit = fc.oneof(fc.constantFrom('"', "\\", "\u0000", "\n", "\u001f", "\u007f", " ", "~", "é", "☕", "😀", "\u2028"), fc.string({ maxLength: 1 }));
  fc.assert(
    fc.property(fc.array(unit, { maxLength: 40 }), (units) => {
      const s = units.join("");
      expect(jsonBytes(s)).toBe(Buffer.byteLength(JSON.stringify(s)));
    }),
    { numRuns: 2000 },
  );
});
