// ByteLru: values kept within a budget of bytes, the least recently used let go first (the needle filters' cache).
import { expect, test } from "bun:test";
import fc from "fast-check";
import { ByteLru } from "../../../src/storage/byte-lru.ts";

type Op = { kind: "get" | "set" | "delete"; name: string; bytes: number };
const op = fc.record({
  kind: fc.constantFrom<Op["kind"]>("get", "set", "set", "delete"),
  name: fc.constantFrom("a", "b", "c", "d", "e"),
  bytes: fc.integer({ min: 0, max: 40 }),
});

test("keeps what a list in order of last use keeps: the newest values whose bytes fit the budget, and their sum", () => {
  fc.assert(
    fc.property(fc.integer({ min: 20, max: 80 }), fc.array(op, { minLength: 10, maxLength: 60 }), (budget, ops) => {
      const lru = new ByteLru<Uint8Array>(budget);
      const model: [string, Uint8Array][] = []; // oldest first
      for (const o of ops) {
        const at = model.findIndex(([n]) => n === o.name);
        if (o.kind === "get") {
          const got = lru.get(o.name);
          expect(got).toBe(at >= 0 ? model[at][1] : undefined);
          if (at >= 0) model.push(...model.splice(at, 1));
        } else if (o.kind === "delete") {
          lru.delete(o.name);
          if (at >= 0) model.splice(at, 1);
        } else {
          const value = new Uint8Array(o.bytes);
          lru.set(o.name, value);
          if (at >= 0) model.splice(at, 1);
          model.push([o.name, value]);
          while (model.reduce((n, [, v]) => n + v.byteLength, 0) > budget) model.shift();
        }
        expect(lru.bytes).toBe(model.reduce((n, [, v]) => n + v.byteLength, 0));
      }
      for (const name of ["a", "b", "c", "d", "e"]) expect(lru.get(name)).toBe(model.find(([n]) => n === name)?.[1]);
    }),
    { numRuns: 500 },
  );
});
