// DiskSpace (storage/disk.ts, contract §14): when a full data directory counts as writable again, on a real small tmpfs.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { DiskSpace, StorageFull } from "../../../src/storage/disk.ts";
import { mountSmallDisk, type SmallDisk } from "../../helpers/small-disk.ts";

let disk: SmallDisk;
beforeAll(() => {
  disk = mountSmallDisk("sluice-disk-space-", 16, 6); // 16 MB, 12 of them ballast: under the 4 MB that counts as room
  writeFileSync(join(disk.dataDir, "filler"), new Uint8Array(2 * 2 ** 20));
});
afterAll(() => disk?.unmount());

/** noRoom is a commit failure as lmdb-js reports one that found the disk full (ENOSPC). */
const noRoom = () => Object.assign(new Error("No space left on device"), { code: 28 });

test("a write refused for want of room marks the disk full; a small write stored beside it does not end that, one half as large as the refused one does", async () => {
  const space = new DiskSpace(disk.dataDir);
  expect(space.full()).toBe(false);
  expect(await space.refused(noRoom(), 400_000)).toBeInstanceOf(StorageFull);
  expect(space.full()).toBe(true);
  space.stored(1_000); // one entry, in pages LMDB freed inside its file
  expect(space.full()).toBe(true);
  space.stored(199_999);
  expect(space.full()).toBe(true);
  space.stored(200_000); // a bulk a little smaller than the refused one
  expect(space.full()).toBe(false);
});

test("a failure that is not for want of room is passed on as it is, and leaves the disk writable", async () => {
  const space = new DiskSpace(disk.dataDir);
  const other = Object.assign(new Error("Invalid argument"), { code: 22 });
  expect(await space.refused(other, 400_000)).toBe(other);
  expect(space.full()).toBe(false);
});

test("freeing space on the disk ends it without a write", async () => {
  const space = new DiskSpace(disk.dataDir);
  await space.refused(noRoom(), 400_000);
  expect(space.full()).toBe(true);
  disk.freeBallast(1);
  expect(space.full()).toBe(false);
});
