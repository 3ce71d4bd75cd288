// The runtime settings: npm start, and the benches that run Sluice in their own process, give it the same JavaScriptCore and allocator settings as the servers tests and benches spawn.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RUNTIME_ENV } from "../../src/runtime.ts";

test("npm start runs bun src/main.ts with every RUNTIME_ENV setting", () => {
  const start: string = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "package.json"), "utf8")).scripts.start;
  expect(Object.keys(RUNTIME_ENV).length).toBeGreaterThan(0);
  for (const [name, value] of Object.entries(RUNTIME_ENV)) expect(start.split(" ")).toContain(`${name}=${value}`);
  expect(start.endsWith(" bun src/main.ts")).toBe(true);
});

test("the benches that run Sluice in their own process run with every RUNTIME_ENV setting, as npm start does", () => {
  const scripts: Record<string, string> = JSON.parse(readFileSync(join(import.meta.dir, "..", "..", "package.json"), "utf8")).scripts;
  for (const name of ["bench:explore", "bench:needles", "bench:versus", "bench:ui", "bench:sessions"]) {
    for (const [setting, value] of Object.entries(RUNTIME_ENV))
      expect({ name, words: scripts[name].split(" ") }).toEqual({ name, words: expect.arrayContaining([`${setting}=${value}`]) });
  }
});
