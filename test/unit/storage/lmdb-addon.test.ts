// The lmdb addon the server loads, as scripts/patch-lmdb.mjs leaves it (contract §14: a full disk never takes the
// server down). Its message for a failed page write is formatted into 100 bytes; the format as shipped can overrun them.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..", "..");
/** the addon file lmdb's own loader picks on this machine */
const addon = (): string => createRequire(join(ROOT, "package.json"))("node-gyp-build-optional-packages").path(join(ROOT, "node_modules", "lmdb"));

test("a failed page write's message fits in LMDB's 100-byte buffer: the loaded addon formats only the position and size", () => {
  const bytes = readFileSync(addon());
  expect(bytes.indexOf("buffer sizes %i %i %i")).toBe(-1);
  // at most 64 characters with the longest numbers
  expect(bytes.indexOf("Attempting to write page at position %u, size %u\0")).toBeGreaterThan(0);
});
