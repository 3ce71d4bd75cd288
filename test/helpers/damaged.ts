// damaged: a decoder fuzzed with damaged copies of a good value, some bytes changed and its end cut off.
import { expect } from "bun:test";
import fc from "fast-check";

/** damagedCopies gives copies of `good` with one to four bytes changed (never its first, the tag) and cut to `keep` bytes or more. */
export const damagedCopies = (good: Uint8Array, keep = 1): fc.Arbitrary<Buffer> =>
  fc
    .tuple(fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }), fc.nat(good.length))
    .map(([flips, cut]) => {
      const bytes = Buffer.from(good.subarray(0, Math.max(keep, cut)));
      for (const [at, v] of flips) if (at > 0 && at < bytes.length) bytes[at] = v;
      return bytes;
    });

/** readsOrRefuses runs a read of a damaged value, which must check what it read or throw an Error: never crash another way or hang. */
export function readsOrRefuses(read: () => void): void {
  try {
    read();
  } catch (e) {
    expect(e).toBeInstanceOf(Error);
  }
}
