// PerTurn: a value read at most once an event-loop turn.
import { expect, test } from "bun:test";
import { PerTurn } from "../../src/turn.ts";

test("a PerTurn reads once within a turn, again in the next turn, and again after forget", async () => {
  let reads = 0;
  const v = new PerTurn(() => ++reads);
  expect([v.get(), v.get()]).toEqual([1, 1]);
  await Promise.resolve(); // a promise of the same turn shares the value
  expect(v.get()).toBe(1);
  await new Promise((r) => setImmediate(r));
  expect(v.get()).toBe(2);
  v.forget();
  expect(v.get()).toBe(3);
});
