// The action dictionary (dictionary.ts) on a real LMDB: the actions a fragment finds are kept for the next query, and
// an action committed since is found at once; one put but not yet committed is not, and nothing found meanwhile is kept.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabases } from "../../../src/storage/db.ts";
import { Dictionary } from "../../../src/storage/indexes/dictionary.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-dictionary-"));
const dbs = openDatabases(dir, () => {});
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a fragment finds every action committed before the query, also one committed after the same fragment was asked", async () => {
  const dictionary = new Dictionary(dbs.dictionary);
  const any = () => true;
  const add = (action: string) => {
    const puts: Promise<unknown>[] = [];
    dictionary.add("ws", "production", [action], puts);
    return Promise.all(puts);
  };
  await add("order.created");
  await add("user.login");
  expect(dictionary.actions("ws", "production", "ord", any)).toEqual(["order.created"]);
  expect(dictionary.actions("ws", "production", "ord", any)).toEqual(["order.created"]); // kept

  const refunded = add("order.refunded");
  expect(dictionary.actions("ws", "production", "ord", any)).toEqual(["order.created"]); // put, not yet committed
  await refunded;
  expect(dictionary.actions("ws", "production", "ord", any).sort()).toEqual(["order.created", "order.refunded"]);
  expect(dictionary.actions("ws", "production", "ord", (a) => a.endsWith("refunded"))).toEqual(["order.refunded"]);
  expect(dictionary.actions("ws", "development", "ord", any)).toEqual([]); // another tenant's
});

test("an action is put once per tenant: again while in flight, then known without a read once committed", async () => {
  const dictionary = new Dictionary(dbs.dictionary);
  const add = (ws: string, action: string) => {
    const puts: Promise<unknown>[] = [];
    dictionary.add(ws, "production", [action], puts);
    return puts;
  };
  const first = add("ws2", "job.run");
  expect(first.length).toBeGreaterThan(0);
  const again = add("ws2", "job.run"); // not committed yet: the same keys put twice, harmless
  expect(again.length).toBe(first.length);
  await Promise.all([...first, ...again]);
  await Bun.sleep(0); // the dictionary learns of the commit after the puts settle
  const get = dbs.dictionary.get.bind(dbs.dictionary);
  let reads = 0;
  dbs.dictionary.get = ((...args: Parameters<typeof get>) => {
    reads++;
    return get(...args);
  }) as typeof get;
  try {
    expect(add("ws2", "job.run")).toEqual([]);
    expect(reads).toBe(0); // a block's known actions cost no read
    expect(add("ws3", "job.run").length).toBe(first.length); // another tenant records it anew
    expect(new Dictionary(dbs.dictionary).actions("ws2", "production", "job", () => true)).toEqual(["job.run"]);
    const restarted = new Dictionary(dbs.dictionary);
    const puts: Promise<unknown>[] = [];
    restarted.add("ws2", "production", ["job.run"], puts);
    expect(puts).toEqual([]); // a start reads what is committed
  } finally {
    dbs.dictionary.get = get;
  }
});
