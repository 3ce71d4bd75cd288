// Reading one path off an entry's stored objects text (object-path.ts) gives what parsing the whole text and walking
// the path gives, for any objects JSON can hold.
import { expect, test } from "bun:test";
import fc from "fast-check";
import { objectPath, pathText } from "../../../src/storage/format/object-path.ts";

// the reference: parse everything, walk the keys (never into arrays), take the scalar's text form as `=` sees it
function parsed(text: string, element: number, keys: string[]): string | undefined {
  let at: unknown = (JSON.parse(text) as unknown[])[element];
  for (const key of keys) {
    if (at === null || typeof at !== "object" || Array.isArray(at) || !Object.hasOwn(at, key)) return undefined;
    at = (at as Record<string, unknown>)[key];
  }
  if (typeof at === "string") return at;
  if (typeof at === "number") return JSON.stringify(at);
  if (typeof at === "boolean") return at ? "true" : "false";
  return undefined;
}

const key = fc.oneof(fc.constantFrom("a", "b", "id", "__proto__", 'q"t', "s\\l", "ü", "a.b", ""), fc.string({ maxLength: 4 }));
const scalar = fc.oneof(
  fc.string({ maxLength: 8 }),
  fc.constantFrom('"', "\\", '\\"', "}", "]", ",", ':"a":', '{"a":1}', "\u2028", "\ud800"),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, scalar, fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(key, tie("v"), { maxKeys: 4 })),
}));
const objects = fc.option(fc.dictionary(key, value.v, { maxKeys: 5 }), { nil: null });

test("a path read off the stored objects text is what parsing the text and walking the path gives", () => {
  fc.assert(
    fc.property(
      fc.tuple(objects, objects, objects, objects),
      fc.integer({ min: 0, max: 3 }),
      fc.array(key, { minLength: 1, maxLength: 3 }),
      (objs, element, keys) => {
        const text = JSON.stringify(objs);
        expect(pathText(text, objectPath(element, keys))).toBe(parsed(text, element, keys));
        // and a path that is there: the first key of the element, then the first key below it
        const holder = objs[element];
        const first = holder ? Object.keys(holder)[0] : undefined;
        if (holder && first !== undefined) {
          const below = holder[first];
          const path =
            below !== null && typeof below === "object" && !Array.isArray(below) && Object.keys(below).length > 0 ? [first, Object.keys(below)[0]] : [first];
          expect(pathText(text, objectPath(element, path))).toBe(parsed(text, element, path));
        }
      },
    ),
    { numRuns: 3000 },
  );
});

test("a path read off the stored objects text finds numbers, booleans and escaped strings as `=` compares them", () => {
  const text = JSON.stringify([{ id: "u-1" }, null, { n: -1.5e-7, ok: false }, { http: { route: 'a"b\\c', status: 404 }, list: [1] }]);
  expect(pathText(text, objectPath(0, ["id"]))).toBe("u-1");
  expect(pathText(text, objectPath(2, ["n"]))).toBe("-1.5e-7");
  expect(pathText(text, objectPath(2, ["ok"]))).toBe("false");
  expect(pathText(text, objectPath(3, ["http", "route"]))).toBe('a"b\\c');
  expect(pathText(text, objectPath(3, ["http", "status"]))).toBe("404");
  expect(pathText(text, objectPath(3, ["list"]))).toBeUndefined();
  expect(pathText(text, objectPath(3, ["http"]))).toBeUndefined();
  expect(pathText(text, objectPath(1, ["id"]))).toBeUndefined();
});
