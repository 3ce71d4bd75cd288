// The contract's e2e files, unchanged, run a second time against a cluster of 3 NATS servers and 3 Sluice nodes
// (contract §13: every rule holds whichever node answers): SLUICE_TEST_CLUSTER makes test/helpers/sluice.ts start a
// cluster for each fresh TestSluice, calls going round-robin through every node, or all through one node.
// Files that test one process's own parts (restarts, storage internals, the injected clock's month roll-over,
// per-process tail bounds) run only in the single process.
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const FILES = ["write", "auth", "admin", "query-errors", "query-semantics", "query-indexes", "explore"].map((f) => `test/e2e/${f}.test.ts`);

/** runSuite runs `bun test` on files with SLUICE_TEST_CLUSTER=mode and returns its exit code and the lines that tell. */
async function runSuite(mode: "round-robin" | "one", files: string[]) {
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...files], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_TEST_CLUSTER: mode },
    stdout: "pipe",
    stderr: "pipe",
  });
  const killer = setTimeout(() => proc.kill(9), 280_000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  const text = out + err;
  const lines = text.split("\n");
  const firstError = lines.findIndex((l) => l.startsWith("error"));
  return {
    code,
    // the first failure's message: a failing run says why, not only which tests
    failed: [...new Set(lines.filter((l) => l.startsWith("(fail)")))].concat(firstError < 0 ? [] : lines.slice(Math.max(0, firstError - 4), firstError + 16)),
    summary: lines.filter((l) => /^\s*\d+ (pass|fail)$/.test(l)),
  };
}

test("the contract's e2e files pass on a cluster with calls round-robin through every node", async () => {
  const r = await runSuite("round-robin", FILES);
  expect({ failed: r.failed, code: r.code }).toEqual({ failed: [], code: 0 });
  expect(r.summary.join(" ")).toContain(" 0 fail");
}, 300_000);

test("the contract's e2e files pass on a cluster with every call through one node", async () => {
  const r = await runSuite("one", FILES.slice(0, 3));
  expect({ failed: r.failed, code: r.code }).toEqual({ failed: [], code: 0 });
}, 300_000);
