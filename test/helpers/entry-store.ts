// An entry store on a real LMDB in a temporary directory, settled, closed and removed after the file's tests.
import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabases } from "../../src/storage/db.ts";
import { EntryStore } from "../../src/storage/entries.ts";
import { UsageStore } from "../../src/storage/usage.ts";

/** tempEntryStore opens a store in a new directory named after `prefix`. */
export function tempEntryStore(prefix: string): EntryStore {
  const dir = mkdtempSync(join(tmpdir(), `sluice-${prefix}-`));
  const dbs = openDatabases(dir);
  const store = new EntryStore(dbs, new UsageStore(dbs.usage));
  afterAll(async () => {
    await store.settled();
    await store.close();
    await dbs.root.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return store;
}
