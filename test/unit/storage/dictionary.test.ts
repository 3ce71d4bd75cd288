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
    dictionary.add("ws", "production", action, puts);
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
