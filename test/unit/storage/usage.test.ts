// The usage count: the quota counts writes still in flight, and a write that failed to commit gives its count back.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabases } from "../../../src/storage/db.ts";
import { UsageStore, monthOf } from "../../../src/storage/usage.ts";
import fc from "fast-check";

const dir = mkdtempSync(join(tmpdir(), "sluice-usage-"));
const dbs = openDatabases(dir);
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

test("take counts writes not yet committed, so two in one turn cannot both pass the limit", async () => {
  const usage = new UsageStore(dbs.usage);
  const first = usage.take("ws-a", "2026-11", 6, 10);
  const second = usage.take("ws-a", "2026-11", 6, 10); // same turn: the first has not committed
  expect(first.ok).toBe(true);
  expect(second).toEqual({ ok: false, used: 6 });
  await usage.put("ws-a", "2026-11");
  expect(usage.used("ws-a", "2026-11")).toBe(6);
});

test("giveBack returns a failed write's count, and the stored count ends right after later writes", async () => {
  const usage = new UsageStore(dbs.usage);
  const failed = usage.take("ws-b", "2026-11", 4, 10);
  const later = usage.take("ws-b", "2026-11", 5, 10);
  expect(later.ok).toBe(true);
  void usage.put("ws-b", "2026-11"); // 9, counting the write that is about to fail
  await usage.giveBack("ws-b", "2026-11", 4);
  expect(failed.ok).toBe(true);
  expect(usage.used("ws-b", "2026-11")).toBe(5);
  expect(usage.take("ws-b", "2026-11", 5, 10).ok).toBe(true); // the 4 given back are free again
  expect(usage.take("ws-b", "2026-11", 1, 10).ok).toBe(false);
});

test("monthOf names the UTC month of any instant, in any order of calls, at month edges and in years 0–99", () => {
  const edges = [Date.UTC(2026, 10, 1) - 1, Date.UTC(2026, 10, 1), Date.UTC(2026, 11, 31, 23, 59, 59, 999), Date.UTC(2027, 0, 1)];
  const early = [new Date(0).setUTCFullYear(50, 5, 30) + 86_400_000 - 1, new Date(0).setUTCFullYear(1950, 5, 15)];
  for (const ms of [...edges, ...early, ...edges.reverse()]) expect(monthOf(ms)).toBe(new Date(ms).toISOString().slice(0, 7));
  fc.assert(
    fc.property(fc.array(fc.integer({ min: -62135596800000, max: 253402300799999 }), { minLength: 1, maxLength: 20 }), (times) => {
      for (const ms of times) expect(monthOf(ms)).toBe(new Date(ms).toISOString().slice(0, 7));
      for (const ms of times) expect(monthOf(ms + 1)).toBe(new Date(ms + 1).toISOString().slice(0, 7)); // the same month again, mostly: the kept one
    }),
  );
});
