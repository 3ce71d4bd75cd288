// PerTurn: a value read at most once an event-loop turn; TurnQueue: items of one turn handled together at its end.
import { expect, test } from "bun:test";
import { PerTurn, TurnQueue } from "../../src/turn.ts";

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

test("TurnQueue hands the items of one event-loop turn to drain together, once, at the turn's end", async () => {
  const drained: number[][] = [];
  const queue = new TurnQueue<number>((items) => drained.push(items));
  queue.push(1);
  queue.push(2);
  await Promise.resolve();
  queue.push(3); // a microtask of the same turn
  expect(drained).toEqual([]);
  await new Promise((turn) => setImmediate(turn));
  expect(drained).toEqual([[1, 2, 3]]);
  queue.push(4);
  await new Promise((turn) => setImmediate(turn));
  expect(drained).toEqual([[1, 2, 3], [4]]);
});
