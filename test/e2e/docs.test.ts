// The guide cannot drift from the code: every `sh runnable` block of README.md, docs/ and bench/README.md runs, in order, against a
// real server started as `npm start` starts it, with KEY and ADMIN set to what its first start printed; every
// relative link resolves, to a file and to a heading; docs/cli.md holds `sluice --help` as the command prints it.
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { removeDir } from "../helpers/sluice.ts";
import { runCli, serverFailure, spawnServer, type ServerProcess } from "../helpers/process.ts";

const ROOT = join(import.meta.dir, "..", "..");
const PAGES = [
  "README.md",
  "bench/README.md",
  ...readdirSync(join(ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => join("docs", f)),
];
const read = (page: string) => readFileSync(join(ROOT, page), "utf8");

interface Fence {
  info: string;
  body: string;
}

/** fences lists a page's fenced code blocks with their info strings (```sh runnable → "sh runnable"). */
function fences(text: string): Fence[] {
  const out: Fence[] = [];
  const re = /^```([^\n]*)\n([\s\S]*?)^```$/gm;
  for (let m = re.exec(text); m; m = re.exec(text)) out.push({ info: m[1].trim(), body: m[2] });
  return out;
}

/** slug is the anchor GitHub gives a heading: lowercased, punctuation dropped, spaces as hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");

/** anchors lists a page's headings' anchors (outside code blocks). */
const anchors = (text: string) => new Set([...text.replace(/^```[\s\S]*?^```$/gm, "").matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1])));

test("every relative link of README.md, bench/README.md and docs/ resolves to a file, and an anchor to one of its headings", () => {
  const broken: string[] = [];
  let links = 0;
  for (const page of PAGES) {
    const text = read(page).replace(/^```[\s\S]*?^```$/gm, "");
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target)) continue; // https:, mailto:
      links++;
      const [path, anchor] = target.split("#");
      const file = path === "" ? join(ROOT, page) : join(ROOT, dirname(page), path);
      if (!existsSync(file)) broken.push(`${page}: ${target} (no file ${relative(ROOT, file)})`);
      else if (anchor && file.endsWith(".md") && !anchors(readFileSync(file, "utf8")).has(anchor)) broken.push(`${page}: ${target} (no heading #${anchor})`);
    }
  }
  expect(broken).toEqual([]);
  expect(links).toBeGreaterThan(20);
});

test("docs/cli.md holds `sluice --help` exactly as the command prints it", async () => {
  const held = fences(read("docs/cli.md")).find((f) => f.info === "text sluice --help");
  expect(held).toBeDefined();
  const { code, stdout, stderr } = await runCli(["--help"]);
  expect(code).toBe(0);
  expect(held!.body.trimEnd()).toBe(`${stdout}${stderr}`.trimEnd());
});

test("every SLUICE_ setting the server reads is in the configuration table of docs/operations.md", () => {
  const table = read("docs/operations.md");
  const names = [...new Set(readFileSync(join(ROOT, "src/config.ts"), "utf8").match(/SLUICE_[A-Z_]+[A-Z]/g))];
  expect(names.length).toBeGreaterThan(15);
  expect(names.filter((name) => !table.includes(`\`${name}\``))).toEqual([]);
});

const servers: ServerProcess[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const s of servers) {
    s.proc.kill();
    await s.exited;
  }
  for (const d of dirs) removeDir(d);
});

// curl fails on an error status and shows the body; npx sluice is this checkout's command (npx would look it up in the registry elsewhere)
const PRELUDE = `set -euo pipefail
curl() { command curl --fail-with-body -sS "$@"; echo; }
npx() { if [ "$1" = sluice ]; then shift; "$BUN" "$ROOT/src/cli/main.ts" "$@"; else command npx "$@"; fi; }
`;

const runnable = PAGES.filter((page) => fences(read(page)).some((f) => f.info === "sh runnable"));

test("the guide has runnable commands on its pages of tasks", () => {
  for (const page of [
    "README.md",
    "docs/getting-started.md",
    "docs/querying.md",
    "docs/exploring.md",
    "docs/alerts.md",
    "docs/grafana-loki.md",
    "docs/operations.md",
  ])
    expect(runnable).toContain(page);
});

for (const page of runnable) {
  test(`the runnable commands of ${page} run against a fresh server as written`, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "sluice-docs-data-"));
    const workDir = mkdtempSync(join(tmpdir(), "sluice-docs-work-"));
    dirs.push(dataDir, workDir);
    const server = await spawnServer(dataDir);
    servers.push(server);
    const key = /API key \(shown only now\):\s+(\S+)/.exec(server.banner)?.[1];
    const admin = /Admin token \(shown only now\):\s+(\S+)/.exec(server.banner)?.[1];
    expect(key).toBeDefined();
    expect(admin).toBeDefined();
    const host = new URL(server.base).host;
    const blocks = fences(read(page))
      .filter((f) => f.info === "sh runnable")
      .map((f) => f.body.replaceAll("localhost:8080", host));
    const proc = Bun.spawn(["bash", "-c", PRELUDE + blocks.join("\n")], {
      cwd: workDir,
      env: { ...process.env, KEY: key!, ADMIN: admin!, SLUICE_DATA_DIR: dataDir, BUN: process.execPath, ROOT },
      stdout: "pipe",
      stderr: "pipe",
    });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    if (code !== 0)
      throw serverFailure(server, `${page}: a runnable command failed (exit ${code})\n--- stdout\n${out.slice(-4000)}\n--- stderr\n${err.slice(-4000)}`);
    expect(code).toBe(0);
  }, 60_000);
}
