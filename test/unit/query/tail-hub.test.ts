// The tail hub's ordering rule: an entry is released to live tails only once no write under way can still commit an
// entry before it, so nothing is ever committed behind a cursor a tail has sent.
import { expect, test } from "bun:test";
import { IdGenerator } from "../../../src/ids.ts";
import { TailHub } from "../../../src/query/tail-hub.ts";
import type { Entry } from "../../../src/storage/entries.ts";
import { tempEntryStore } from "../../helpers/entry-store.ts";

const store = tempEntryStore("hub");

const entryOf = (id: string): Entry => ({
  id,
  level: "info",
  action: "a",
  message: null,
  tags: [],
  clientMs: 0,
  actor: null,
  target: null,
  context: null,
  metadata: null,
});
const turn = () => new Promise((r) => setImmediate(r));

test("entries above the lowest write in flight wait until it settles, then come out in ascending order", async () => {
  const tenant = { ws: crypto.randomUUID(), env: "development" as const };
  const hub = new TailHub(store);
  const got: string[] = [];
  const named: number[][] = [];
  hub.subscribe(tenant, (batch) => {
    got.push(...batch.rows.map((r) => r.entry.id));
    named.push([...batch.candidates("l", "info")], [...batch.candidates("l", "error")]);
  });
  const ids = new IdGenerator();
  const early = ids.next(2, Date.now()); // drawn first (say, a bulk write still being prepared)...
  const late = ids.next(1, early.ms); // ...drawn after, committed first
  let commitEarly!: () => void;
  const held = store.inFlight.track(tenant, { ms: early.ms, id: early.ids[0] }, new Promise<void>((r) => (commitEarly = r)));
  await store.append(tenant, late.ms, late.ids.map(entryOf), -1);
  await turn();
  await turn();
  expect(got).toEqual([]); // the late entry is committed, but an entry before it may still come
  expect(hub.frontier(tenant)).toBeUndefined(); // and a tail opening now starts below both
  await store.append(tenant, early.ms, early.ids.map(entryOf), -1);
  commitEarly();
  await held;
  await turn();
  await turn();
  expect(got).toEqual([...early.ids, ...late.ids]);
  expect(named).toEqual([[0, 1, 2], []]); // the rows a level term names, from the blocks' postings
  expect(hub.frontier(tenant)).toEqual({ ms: late.ms, id: late.ids[0] });
});
