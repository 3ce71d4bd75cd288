// sluice import FILE (NDJSON or a JSON array, in bulk batches, with a summary) and sluice export (NDJSON of a query).
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { entry } from "../helpers/sluice.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-transfer-"));
let server: ServerProcess;
let key: string;
beforeAll(async () => {
  server = await spawnServer(join(dir, "data"), { SLUICE_ACCESS_LOG: "off" });
  key = /API key \(shown only now\):\s+(\S+)/.exec(server.banner)![1];
}, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine
afterAll(async () => {
  server.proc.kill("SIGTERM");
  await server.exited;
  rmSync(dir, { recursive: true, force: true });
});
const cli = (...args: string[]) => runCli([...args, "--url", server.base, "--key", key]);
const usage = async () => (await (await fetch(`${server.base}/api/v1/workspace/usage`, { headers: { "x-api-key": key } })).json()).used as number;

describe("import", () => {
  test("an NDJSON file is stored in bulk batches; bad lines and invalid entries are rejected with reasons, the rest stored", async () => {
    const lines = Array.from({ length: 250 }, (_, i) => JSON.stringify(entry({ action: "import.ndjson", message: `line ${i + 1}` })));
    lines[9] = "{not json"; // line 10
    lines[99] = JSON.stringify(entry({ level: "loud" })); // line 100
    lines.splice(150, 0, ""); // a blank line is skipped, not counted
    const file = join(dir, "entries.ndjson");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const before = await usage();
    const r = await cli("import", file);
    expect(r.code).toBe(1); // some were rejected
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ read: 250, stored: 248, rejected: 2 });
    expect(summary.reasons).toEqual([
      { at: 10, message: expect.stringContaining("not JSON") },
      { at: 100, field: "level", message: expect.stringContaining("level") },
    ]);
    expect((await usage()) - before).toBe(248);
  });

  test("a JSON array file is streamed element by element, and a clean import exits 0", async () => {
    const file = join(dir, "entries.json");
    writeFileSync(
      file,
      JSON.stringify(
        Array.from({ length: 30 }, (_, i) => entry({ action: "import.array", message: `element ${i}, with [brackets] and "quotes"` })),
        null,
        2,
      ),
    );
    const r = await cli("import", file);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ read: 30, stored: 30, rejected: 0, reasons: [] });
  });

  test("import without a key exits 2 with the usage line", async () => {
    const r = await runCli(["import", join(dir, "entries.json")], { SLUICE_API_KEY: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--key");
  });
});

describe("export", () => {
  test("export writes the entries of a query and time range as NDJSON, newest first, across pages", async () => {
    const r = await cli("export", "--query", "action=import.ndjson");
    expect(r.code).toBe(0);
    const out = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(out).toHaveLength(248);
    expect(out.every((e: { action: string }) => e.action === "import.ndjson")).toBe(true);
    const order = out.map((e: { server_timestamp: string; id: string }) => `${e.server_timestamp}/${e.id}`);
    expect(order).toEqual([...order].sort().reverse());

    const future = await cli("export", "--query", "action=import.array", "--from", "2999-01-01T00:00:00Z");
    expect(future.stdout).toBe("");
    const bad = await cli("export", "--query", "nope=1");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("VALIDATION_QUERY_INVALID");
  });

  test("export writes every entry to a reader that takes its output late (a pipe that fills before it is read)", async () => {
    // a shell pipe whose reader starts a second late: the 248 entries are past its 64 KiB, so a writer that exits unflushed loses the rest
    const exporter = [process.execPath, "src/cli/main.ts", "export", "--query", "action=import.ndjson", "--url", server.base, "--key", key];
    const proc = Bun.spawn(["sh", "-c", `"$@" | (sleep 1; cat)`, "sh", ...exporter], {
      cwd: join(import.meta.dir, "..", ".."),
      stdout: "pipe",
      stderr: "pipe",
    });
    const [stdout, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toHaveLength(248);
  });

  test("--help lists every command with a gap between its name and its summary", async () => {
    const r = await runCli(["--help"]);
    expect(r.code).toBe(0);
    const rows = r.stdout.split("\n").filter((line) => /^ {2}\S/.test(line));
    expect(rows.map((row) => row.trim().split(" ")[0])).toEqual(expect.arrayContaining(["serve", "cluster", "alerts", "import", "export", "tail"]));
    for (const row of rows) expect(row).toMatch(/^ {2}\S+( \S+)* {2,}\S/);
  });

  test("import and export have --help", async () => {
    for (const cmd of ["import", "export"]) {
      const r = await runCli([cmd, "--help"]);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`usage: sluice ${cmd}`);
    }
  });
});
