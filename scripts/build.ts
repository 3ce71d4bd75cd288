#!/usr/bin/env bun
// build: compiles the sluice command into one self-contained executable, native addons embedded (contract §1).
//
// lmdb (and msgpackr's optional msgpackr-extract) find their .node addon at run time through
// node-gyp-build-optional-packages, which searches node_modules on disk; a compiled executable
// has no node_modules, so that search fails. The plugin below replaces the loader, per importing
// package, with a static `require("<the addon file>")`: Bun embeds a statically required .node
// and loads it from the executable. The file is chosen at build time by the very loader it
// replaces, so the binary loads the same addon `bun src/main.ts` does on this machine.
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { parseArgs } from "node:util";
import type { BunPlugin } from "bun";
import { buildUiSources } from "../src/http/ui-bundle.ts";

const ROOT = join(import.meta.dir, "..");
const LOADER = "node-gyp-build-optional-packages";
/** Packages the program cannot run without: a build that cannot embed their addon fails. */
const REQUIRED_ADDONS = new Set(["lmdb"]);

/** findAddon is the loader's own lookup: the addon file it would load for the package in dir. */
const findAddon: (dir: string) => string = createRequire(join(ROOT, "package.json"))(LOADER).path;

/** packageDir is the nearest directory above file that holds a package.json with a name. */
function packageDir(file: string): { dir: string; name: string } {
  for (let dir = dirname(file); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, "package.json");
    if (!existsSync(manifest)) continue;
    const name = JSON.parse(readFileSync(manifest, "utf8")).name;
    if (name) return { dir, name };
  }
  throw new Error(`build: no package.json above ${file}`);
}

/** addonLoader is the module that stands in for the loader inside the package in dir. */
function addonLoader(dir: string, name: string, embedded: string[]): string {
  let file: string;
  try {
    file = findAddon(dir);
    // Bun's resolver may fall back to its global install cache; embed only what the install put here.
    if (!file.startsWith(ROOT + sep)) throw new Error(`found ${file}, outside ${ROOT}; run npm install`);
  } catch (e) {
    if (REQUIRED_ADDONS.has(name)) throw new Error(`build: cannot embed the native addon of ${name}: ${(e as Error).message}`);
    // An optional addon (msgpackr-extract): its module exports undefined, which msgpackr reads as
    // "no acceleration". Not a throw: a bundled CommonJS module that threw once is cached half-made,
    // so the second require (lmdb's own msgpackr) would get {} and call a missing function.
    embedded.push(`${name}: none (optional; runs without it)`);
    return `module.exports = function loadAddon() { return undefined; };`;
  }
  embedded.push(`${name}: ${file}`);
  return `module.exports = function loadAddon() { return require(${JSON.stringify(file)}); };`;
}

/** embedNativeAddons makes every package's node-gyp-build lookup a static require Bun can embed. */
export function embedNativeAddons(embedded: string[] = []): BunPlugin {
  return {
    name: "embed-native-addons",
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${LOADER}$`) }, (args) => ({ path: packageDir(args.importer).dir, namespace: "native-addon" }));
      build.onLoad({ filter: /.*/, namespace: "native-addon" }, (args) => {
        const { name } = packageDir(join(args.path, "package.json"));
        return { contents: addonLoader(args.path, name, embedded), loader: "js" };
      });
    },
  };
}

/**
 * embedUi makes src/http/ui-assets.ts hand out the web explorer's files built now, instead of building them from
 * src/ui at run time: the binary carries neither src/ui nor its packages.
 */
export async function embedUi(embedded: string[] = []): Promise<BunPlugin> {
  const sources = await buildUiSources();
  const contents = `import { bundleOf } from "./ui-bundle.ts";
const bundle = Promise.resolve(bundleOf(${JSON.stringify(sources)}));
export function uiBundle() { return bundle; }
`;
  return {
    name: "embed-ui",
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]http[\\/]ui-assets\.ts$/ }, () => {
        embedded.push(`web explorer: ${Object.keys(sources.assets).join(", ")}`);
        return { contents, loader: "ts" };
      });
    },
  };
}

/** buildExecutable compiles src/cli/main.ts into outfile and returns the addons it embedded. */
export async function buildExecutable(outfile: string): Promise<string[]> {
  const embedded: string[] = [];
  const result = await Bun.build({
    // the full-text worker is a thread of its own: the executable carries it as a second entrypoint
    entrypoints: [
      join(ROOT, "src/cli/main.ts"),
      join(ROOT, "src/storage/indexes/fulltext-worker.ts"),
      join(ROOT, "src/storage/merge/merge-worker.ts"),
      join(ROOT, "src/ingest/prepare-worker.ts"),
    ],
    minify: true,
    plugins: [embedNativeAddons(embedded), await embedUi(embedded)],
    // A bunfig.toml in the directory the binary runs from must not change it (it could preload code).
    compile: { outfile: resolve(outfile), autoloadBunfig: false },
  });
  if (!result.success) throw new AggregateError(result.logs, "build: bundling failed");
  if (!embedded.some((e) => e.startsWith("lmdb:"))) throw new Error("build: BUG: lmdb's loader was never replaced; its addon is not embedded");
  if (!embedded.some((e) => e.startsWith("web explorer:")))
    throw new Error("build: BUG: src/http/ui-assets.ts was never replaced; the explorer is not embedded");
  return embedded;
}

if (import.meta.main) {
  const { values } = parseArgs({ options: { outfile: { type: "string", default: join(ROOT, "dist/sluice") } } });
  const embedded = await buildExecutable(values.outfile!);
  console.log(`built ${resolve(values.outfile!)}\nembedded:\n${embedded.map((e) => `  ${e}`).join("\n")}`);
}
