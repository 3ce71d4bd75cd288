// ui-bundle: builds the web explorer (src/ui/, browser code the server never imports) into the static files /ui serves:
// one script, one style sheet and the page that loads them, each also gzipped. scripts/build.ts embeds the same files in
// the binary; from source they are built on the first request for /ui.
import { join } from "node:path";

/** UiFile is one static file of the explorer. */
export interface UiFile {
  type: string;
  body: Uint8Array;
  gzip: Uint8Array;
}

/** UiBundle is the explorer's page and the files it loads, by their name under /ui/assets/. */
export interface UiBundle {
  page: UiFile;
  assets: Record<string, UiFile>;
}

/** UiSources is the bundle as text, the form scripts/build.ts embeds in the binary. */
export interface UiSources {
  page: string;
  assets: Record<string, { type: string; text: string }>;
}

const ENTRY = join(import.meta.dir, "..", "ui", "main.tsx");
const TYPES: Record<string, string> = { js: "text/javascript; charset=utf-8", css: "text/css; charset=utf-8" };

/** buildUiSources bundles src/ui/ with Bun's bundler (minified, content-hashed names) and writes the page that loads it. */
export async function buildUiSources(): Promise<UiSources> {
  const result = await Bun.build({ entrypoints: [ENTRY], target: "browser", format: "esm", minify: true, naming: "[name]-[hash].[ext]" });
  if (!result.success) throw new AggregateError(result.logs, "ui: bundling src/ui failed");
  const assets: UiSources["assets"] = {};
  for (const out of result.outputs) {
    const name = out.path.slice(out.path.lastIndexOf("/") + 1);
    const ext = name.slice(name.lastIndexOf(".") + 1);
    if (TYPES[ext]) assets[name] = { type: TYPES[ext], text: await out.text() };
  }
  const names = Object.keys(assets);
  const script = names.find((n) => n.endsWith(".js"));
  if (!script) throw new Error("ui: the bundle has no script");
  const styles = names.filter((n) => n.endsWith(".css")).map((n) => `<link rel="stylesheet" href="/ui/assets/${n}">`);
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<title>Sluice</title>
${styles.join("\n")}
<script type="module" src="/ui/assets/${script}"></script>
</head>
<body>
<div id="app"></div>
<noscript>The Sluice explorer needs JavaScript; the HTTP API works without it (/docs).</noscript>
</body>
</html>
`;
  return { page, assets };
}

/** bundleOf turns the sources into served files, gzipped once. */
export function bundleOf(sources: UiSources): UiBundle {
  const file = (type: string, text: string): UiFile => {
    const body = new TextEncoder().encode(text);
    return { type, body, gzip: Bun.gzipSync(body, { level: 9 }) };
  };
  const assets: Record<string, UiFile> = {};
  for (const [name, a] of Object.entries(sources.assets)) assets[name] = file(a.type, a.text);
  return { page: file("text/html; charset=utf-8", sources.page), assets };
}
