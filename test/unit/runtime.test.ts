// The runtime settings: npm start gives the server the same JavaScriptCore and allocator settings as the servers tests and benches spawn.
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
