// Layers: imports in src/ run one way, wiring → http → ingest, query, admin → auth → limits → storage → leaves,
// and no file reaches itself through its imports. A lower layer tells a higher one something by an event or a function.
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { Glob } from "bun";

const SRC = join(import.meta.dir, "..", "..", "src");

// cluster/ is wiring: a cluster node composes a Sluice per partition copy and routes requests between them and NATS.
/** LAYERS from the top; a file may import files of a lower layer and of its own folder (wiring and leaves: of their own layer). */
const LAYERS: [string, (file: string) => boolean][] = [
  [
    "wiring",
    (f) => ["main.ts", "server.ts", "app.ts", "compose.ts", "bootstrap.ts", "syslog.ts"].includes(f) || f.startsWith("cli/") || f.startsWith("cluster/"),
  ],
  ["http", (f) => f.startsWith("http/")],
  // alerts/ evaluates rules through query/ (the hits engine) and is served by http/: a layer between the two
  ["alerts", (f) => f.startsWith("alerts/")],
  // loki/ evaluates LogQL on top of the native query engine (it pushes selectors down to query/), so it sits above it
  ["loki", (f) => f.startsWith("loki/")],
  ["ingest, query, admin", (f) => f.startsWith("ingest/") || f.startsWith("query/") || f.startsWith("admin/")],
  ["auth", (f) => f.startsWith("auth/")],
  ["limits", (f) => f.startsWith("limits/")],
  ["storage", (f) => f.startsWith("storage/")],
  ["leaves", (f) => !f.includes("/")],
];
const layerOf = (file: string) => LAYERS.findIndex(([, has]) => has(file));
const folderOf = (file: string) => (file.includes("/") ? file.slice(0, file.indexOf("/")) : "");

/** browser code (the web explorer): bundled for the page, never imported by the server; it imports only its own folder */
const isBrowser = (file: string) => file.startsWith("ui/");
const allFiles = [...new Glob("**/*.{ts,tsx}").scanSync(SRC)].sort();
const files = allFiles.filter((f) => !isBrowser(f));
/** imports of each file, as paths relative to src/ (type-only imports too: they tie files together all the same) */
const imports = new Map(
  allFiles.map((file) => {
    const text = readFileSync(join(SRC, file), "utf8");
    const found = [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.{1,2}\/[^"]+)"/g)].map((m) => relative(SRC, join(SRC, dirname(file), m[1])));
    return [file, found] as const;
  }),
);

test("every file of src/ belongs to a layer", () => {
  expect(files.filter((f) => layerOf(f) < 0)).toEqual([]);
  expect(files.length).toBeGreaterThan(50);
});

test("no import climbs: a file imports only lower layers and its own folder", () => {
  const climbing: string[] = [];
  for (const [file, targets] of imports) {
    for (const target of targets) {
      const sameFolder = folderOf(file) === folderOf(target) && folderOf(file) !== "";
      const sameLayerAllowed = layerOf(file) === layerOf(target) && (layerOf(file) === 0 || layerOf(file) === LAYERS.length - 1);
      if (!sameFolder && !sameLayerAllowed && layerOf(target) <= layerOf(file))
        climbing.push(`${file} (${LAYERS[layerOf(file)][0]}) → ${target} (${LAYERS[layerOf(target)]?.[0]})`);
    }
  }
  expect(climbing).toEqual([]);
});

test("no file reaches itself through its imports", () => {
  const cycles: string[] = [];
  const state = new Map<string, "open" | "done">();
  const visit = (file: string, path: string[]) => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "open") {
      cycles.push([...path.slice(path.indexOf(file)), file].join(" → "));
      return;
    }
    state.set(file, "open");
    for (const target of imports.get(file) ?? []) visit(target, [...path, file]);
    state.set(file, "done");
  };
  for (const file of files) visit(file, []);
  expect(cycles).toEqual([]);
});

test("the check sees a climbing import (a file of storage/ importing http/ is caught)", () => {
  expect(layerOf("storage/x.ts")).toBeGreaterThan(layerOf("http/x.ts"));
  expect(layerOf("words.ts")).toBe(LAYERS.length - 1);
});

test("browser code stays apart: no server file imports src/ui/, and src/ui/ imports only its own folder", () => {
  const crossing: string[] = [];
  for (const [file, targets] of imports) {
    for (const target of targets) if (isBrowser(file) !== isBrowser(target)) crossing.push(`${file} → ${target}`);
  }
  expect(crossing).toEqual([]);
  expect(allFiles.filter(isBrowser).length).toBeGreaterThan(5);
});
