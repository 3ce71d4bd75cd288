// AlertOwners (contract §16: each rule is evaluated by exactly one live node): every node reading the same beats picks
// the same owner of a partition's rules; a new pick acts only after HOLD_MS, and the node it replaces stops at once.
import { expect, test } from "bun:test";
import { AlertOwners, HOLD_MS } from "../../../src/cluster/alert-owners.ts";

const holders = new Map<number, string[]>([
  [0, ["n0", "n1", "n2"]],
  [1, ["n1", "n2"]],
  [2, []],
]);

test("every node reading the same beats picks the same holder of each partition, whatever the order they list them in", () => {
  const picks = ["n0", "n1", "n2"].map((id) => new AlertOwners(id, 3, (p) => holders.get(p) ?? []));
  const reversed = new AlertOwners("n0", 3, (p) => [...(holders.get(p) ?? [])].reverse());
  for (const p of [0, 1]) {
    const pick = picks[0].pickOf(p);
    expect(holders.get(p)).toContain(pick!);
    for (const o of [...picks, reversed]) expect(o.pickOf(p)).toBe(pick);
  }
  expect(picks[0].pickOf(2)).toBeUndefined(); // no copy held: nobody evaluates
});

test("a node owns its pick's partitions only after HOLD_MS, and lets one go as soon as another node is the pick", () => {
  let now = 1_000_000;
  const live = ["n0", "n1", "n2"];
  const pick = new AlertOwners("x", 1, () => live).pickOf(0)!;
  const owner = new AlertOwners(
    pick,
    1,
    () => live,
    () => now,
  );
  owner.update();
  expect(owner.owns(0)).toBe(false);
  now += HOLD_MS;
  owner.update();
  expect(owner.owns(0)).toBe(true);
  live.splice(live.indexOf(pick), 1); // its beat is no longer read (expired, as after a kill): another holder is the pick
  owner.update();
  expect(owner.owns(0)).toBe(false);
  live.push(pick); // back: it waits HOLD_MS again, so the node it replaces has read the same beats
  owner.update();
  expect(owner.owns(0)).toBe(false);
  now += HOLD_MS;
  expect(owner.owns(0)).toBe(true);
  owner.release();
  expect(owner.owns(0)).toBe(false);
});
