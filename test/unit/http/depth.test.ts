// DepthMeter: the streaming nesting check agrees with a plain byte-at-a-time state machine, whatever the chunking.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { DepthMeter } from "../../../src/http/depth.ts";

/** deepest is the reference: the nesting depth of JSON-like text, brackets in strings (with escapes) not counting. */
function deepest(bytes: Uint8Array): number {
  let depth = 0, max = 0, inString = false, escaped = false;
  for (const b of bytes) {
    if (inString) {
      if (escaped) escaped = false;
      else if (b === 0x5c) escaped = true;
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) max = Math.max(max, ++depth);
    else if (b === 0x5d || b === 0x7d) depth--;
  }
  return max;
}

test("the nesting limit holds exactly as a byte-at-a-time reading says, however the body is cut into chunks (20,000 cases)", () => {
  const unit = fc.constantFrom("[", "]", "{", "}", '"', "\\", "a", "é", " ");
  fc.assert(
    fc.property(fc.string({ unit, maxLength: 60 }), fc.array(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 10 }), fc.integer({ min: 0, max: 8 }), (text, cuts, limit) => {
      const bytes = new TextEncoder().encode(text);
      const meter = new DepthMeter(limit);
      let ok = true;
      for (let at = 0, c = 0; at < bytes.length && ok; c++) {
        const n = cuts[c % cuts.length];
        ok = meter.feed(bytes.subarray(at, at + n));
        at += n;
      }
      expect(ok).toBe(deepest(bytes) <= limit);
    }),
    { numRuns: 20_000 },
  );
});
