// textKey: any string a user sends stands in an LMDB key so that the key reads back as written and names that string alone.
import { afterAll, expect, test } from "bun:test";
import fc from "fast-check";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { KEPT_MAX, textKey } from "../../../src/storage/keys.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-keys-"));
const root = open({ path: join(dir, "k.mdb") });
const db = root.openDB({ name: "k", encoding: "binary" });
afterAll(async () => {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
});

// control characters and lone surrogates drawn often, at every length around the encoding's 64-unit switch
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)),
  fc.constantFrom("\ud800", "\udfff", "x", "é", "😀"),
  fc.string({ unit: "binary", minLength: 1, maxLength: 1 }),
);
const hostile = fc.nat(200).chain((n) => fc.array(unit, { minLength: n, maxLength: n }).map((units) => units.join("")));

test("a string of any length and characters stands in a key that reads back exactly, with the elements after it", async () => {
  await fc.assert(
    fc.asyncProperty(hostile, fc.integer({ min: 0, max: 8.64e15 }), async (text, ms) => {
      const key = ["ws", "development", "t", textKey(text), ms, "id"];
      await db.put(key, new Uint8Array(0));
      const found = [...db.getKeys({ start: ["ws", "development", "t", textKey(text)], end: ["ws", "development", "t", textKey(text), 8.64e15 + 1] })];
      expect(found).toContainEqual(key);
      for (const k of found) expect((k as unknown[])[3]).toBe(textKey(text));
      await db.remove(key);
    }),
    { numRuns: 2000 },
  );
}, 30_000); // 4,000 commits: seconds on a busy machine

test("strings up to KEPT_MAX units stand as themselves; longer ones as a hash no kept string can equal", () => {
  expect(textKey("x".repeat(KEPT_MAX))).toBe("x".repeat(KEPT_MAX));
  const long = textKey("x".repeat(KEPT_MAX + 1));
  expect(long).toMatch(/^sha256:[0-9a-f]{64}$/);
  expect(long.length).toBeGreaterThan(KEPT_MAX);
});

test("long strings that differ only in a lone surrogate get different keys (the hash reads UTF-16 units, not UTF-8)", () => {
  const base = "y".repeat(KEPT_MAX);
  expect(textKey(`${base}\ud800`)).not.toBe(textKey(`${base}\udfff`));
  expect(textKey(`${base}\ud800`)).not.toBe(textKey(`${base}\ufffd`));
});
