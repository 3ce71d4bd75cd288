// Resident pages (resident.ts): the LMDB file pages a process has read leave its resident memory once released, and
// every value reads back the same afterwards, in the process and after a reopen.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open } from "lmdb";
import { fileResidentBytes, releaseMappedPages, releaseOverBudget } from "../../../src/storage/resident.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-resident-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 2 ** 20;
const VALUES = 16_000; // 4 KB each: 64 MiB of pages
const bytesOf = (i: number) => new Uint8Array(4000).fill(i % 251);

function readAll(db: ReturnType<ReturnType<typeof open>["openDB"]>): number {
  let bad = 0;
  for (const { key, value } of db.getRange()) if ((value as Uint8Array)[3999] !== (key as number) % 251) bad++;
  return bad;
}

test("released LMDB pages leave the resident memory and every value reads back the same, before and after a reopen", async () => {
  const path = join(dir, "a.mdb");
  let root = open({ path, mapSize: 2 ** 34 });
  let db = root.openDB({ name: "e", encoding: "binary" });
  await db.transaction(() => {
    for (let i = 0; i < VALUES; i++) db.put(i, bytesOf(i));
  });
  expect(readAll(db)).toBe(0);
  const before = fileResidentBytes();
  expect(releaseMappedPages()).toBeGreaterThan(0);
  const after = fileResidentBytes();
  expect(before - after).toBeGreaterThan(48 * MiB);

  expect(readAll(db)).toBe(0); // read back through the released map
  expect(fileResidentBytes() - after).toBeGreaterThan(48 * MiB);
  await db.put(VALUES, bytesOf(VALUES)); // and written after a release
  releaseMappedPages();
  await root.close();
  root = open({ path, mapSize: 2 ** 34 });
  db = root.openDB({ name: "e", encoding: "binary" });
  expect(db.getKeysCount()).toBe(VALUES + 1);
  expect(readAll(db)).toBe(0);
  await root.close();
});

test("the maps are released only past the budget of file pages mapped in", async () => {
  const root = open({ path: join(dir, "b.mdb"), mapSize: 2 ** 34 });
  const db = root.openDB({ name: "e", encoding: "binary" });
  await db.transaction(() => {
    for (let i = 0; i < VALUES; i++) db.put(i, bytesOf(i));
  });
  expect(readAll(db)).toBe(0);
  const resident = fileResidentBytes();
  expect(releaseOverBudget(resident + 64 * MiB)).toBe(false);
  expect(fileResidentBytes()).toBeGreaterThan(resident - 8 * MiB);
  expect(releaseOverBudget(resident - 32 * MiB)).toBe(true);
  expect(fileResidentBytes()).toBeLessThan(resident - 48 * MiB);
  await root.close();
});
