// Range reads suspended across event-loop turns while other writes commit (a query in time slices): lmdb-js alone
// stays exact unless the key it stopped at is deleted meanwhile; resumingKeys stays exact then too.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { open, type Key } from "lmdb";
import { resumingKeys } from "../../../src/storage/resume.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-resume-"));
const root = open({ path: join(dir, "resume.mdb"), maxDbs: 4 });
const db = root.openDB({ name: "keys", encoding: "binary" });
afterAll(async () => {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
});

const N = 60;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
const VALUE = new Uint8Array([1]);

/** fill makes the keys ["r", 0] … ["r", N-1] in a fresh prefix, with neighbours in other prefixes. */
async function fill(prefix: string): Promise<void> {
  for (let i = 0; i < N; i++) {
    db.put([prefix, i], VALUE);
    db.put([`${prefix}-`, i], VALUE); // the next prefix: a range must stop before it
  }
  await db.committed;
}

/** walk reads a prefix's keys, newest first or oldest first, and after every 7th key commits `change` and lets turns pass. */
async function walk(keys: (prefix: string, reverse: boolean) => Iterable<Key>, prefix: string, reverse: boolean, change: (at: number) => Promise<unknown>) {
  const seen: number[] = [];
  for (const key of keys(prefix, reverse)) {
    const at = (key as [string, number])[1];
    seen.push(at);
    if (seen.length % 7 === 3) {
      await change(at);
      await nextTurn();
      await Bun.sleep(1); // lmdb-js renews its read transaction on a timer
    }
  }
  return seen;
}

const raw = (prefix: string, reverse: boolean) => db.getKeys({ start: [prefix, reverse ? N : 0], end: [prefix, reverse ? -1 : N], reverse, snapshot: false });
const resuming = (prefix: string, reverse: boolean) => resumingKeys(db, { start: [prefix, reverse ? N : 0], end: [prefix, reverse ? -1 : N], reverse });
const all = Array.from({ length: N }, (_, i) => i);

test("lmdb-js alone: a snapshot:false cursor suspended across turns skips the key after one deleted meanwhile (why resumingKeys reopens)", async () => {
  await fill("raw");
  const deleted: number[] = [];
  const seen = await walk(raw, "raw", true, (at) => {
    deleted.push(at);
    return db.remove(["raw", at]);
  });
  const missed = all.filter((i) => !seen.includes(i) && !deleted.includes(i));
  expect(missed.length).toBeGreaterThan(0); // when lmdb-js stops skipping, resumingKeys is no longer needed
});

describe("a range read suspended across turns while commits change the database around it yields each key present throughout once, in order", () => {
  type Change = (prefix: string, deleted: Set<number>) => (at: number) => Promise<unknown>;
  const rows: [string, Change][] = [
    ["nothing commits", () => async () => {}],
    [
      "writes commit elsewhere (other prefixes, new keys past the end of the read)",
      (prefix) => (at) => Promise.all([db.put([`${prefix}-`, 1000 + at], VALUE), db.put(["other", at], VALUE), db.put([prefix, N + at], VALUE)]),
    ],
    [
      "the key it stopped at is deleted",
      (prefix, deleted) => (at) => {
        deleted.add(at);
        return db.remove([prefix, at]);
      },
    ],
    [
      "keys ahead of it are deleted",
      (prefix, deleted) => (at) => {
        const doomed = [at + 2, at - 2].filter((i) => i >= 0 && i < N);
        for (const i of doomed) deleted.add(i);
        return Promise.all(doomed.map((i) => db.remove([prefix, i])));
      },
    ],
    [
      "the key it stopped at is deleted and put again",
      (prefix) => async (at) => {
        await db.remove([prefix, at]);
        await db.put([prefix, at], VALUE);
      },
    ],
  ];
  for (const [reader, keys, cases] of [
    ["resumingKeys", resuming, rows],
    ["lmdb-js alone", raw, rows.filter(([name]) => !name.includes("stopped at"))],
  ] as const) {
    for (const reverse of [true, false]) {
      test.each(cases)(`${reader}, ${reverse ? "newest" : "oldest"} first: %s`, async (name, change) => {
        const prefix = `${reader}-${name}-${reverse}`;
        await fill(prefix);
        const deleted = new Set<number>();
        const seen = await walk(keys, prefix, reverse, change(prefix, deleted));
        const kept = all.filter((i) => !deleted.has(i) || seen.includes(i)); // a key deleted after it was read was read once
        const ahead = seen.filter((i) => i >= N); // keys written past the read's start during it
        expect(ahead).toEqual([]);
        expect(seen).toEqual(reverse ? kept.reverse() : kept);
      });
    }
  }
});

test("resumingKeys read in one turn gives what getKeys gives", async () => {
  await fill("same");
  for (const reverse of [true, false]) {
    const range = { start: ["same", reverse ? 40 : 10], end: ["same", reverse ? 10 : 40], reverse };
    expect([...resumingKeys(db, range)]).toEqual([...db.getKeys({ ...range, snapshot: false })]);
  }
});
