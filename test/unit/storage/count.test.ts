// countKeys: the planner's count of a range's keys up to a cap, in LMDB's own loop, equals counting the keys one by one.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { open } from "lmdb";
import { countKeys } from "../../../src/storage/count.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-count-"));
const root = open({ path: join(dir, "count.mdb"), maxDbs: 2 });
const db = root.openDB({ name: "keys", encoding: "binary" });
afterAll(async () => {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
});

test("countKeys counts a range's keys up to the cap and names the cap-th key, forwards and in reverse", async () => {
  let prefix = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.uniqueArray(fc.integer({ min: 0, max: 400 }), { maxLength: 120 }),
      fc.integer({ min: 0, max: 400 }),
      fc.integer({ min: 0, max: 400 }),
      fc.integer({ min: 0, max: 130 }),
      fc.boolean(),
      async (keys, a, b, cap, reverse) => {
        const p = `p${prefix++}`;
        for (const k of keys) db.put([p, k], new Uint8Array([1]));
        db.put([`${p}-`, 0], new Uint8Array([1])); // a neighbouring prefix the range must not count
        await db.committed;
        const [lo, hi] = [Math.min(a, b), Math.max(a, b)];
        const range = reverse ? { start: [p, hi], end: [p, lo], reverse } : { start: [p, lo], end: [p, hi] };
        const listed = [...db.getKeys({ ...range, snapshot: false })];
        const { n, last } = countKeys(db, range, cap);
        expect(n).toBe(Math.min(cap, listed.length));
        expect(last).toEqual(cap > 0 && listed.length >= cap ? listed[cap - 1] : undefined);
      },
    ),
    { numRuns: 150 },
  );
});
