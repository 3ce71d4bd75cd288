// The contract's e2e files, unchanged, run a second time against clusters of 3 NATS servers and 3 Sluice nodes
// (contract §13: every rule of §2–12 holds whichever node answers). SLUICE_TEST_CLUSTER makes test/helpers/sluice.ts
// start a cluster (in this process, on NATS servers the test process shares, an account each) for every TestSluice,
// and test/helpers/process.ts a cluster of processes (`sluice cluster init`, 3 `sluice serve`) for every spawned server.
//
// Modes: `round-robin` sends the calls round-robin through the front nodes (spawned servers: a proxy sends each
// connection to the next); `one` sends every call through node 0. Rate limits are per front node, each plan's figure
// divided by the live fronts (§13): files that assert a figure exactly run with SLUICE_TEST_CLUSTER_FRONTS=1, one front
// node (node 0, all roles) and two query and storage nodes, so the figure is the plan's and reads still go to copies on
// the other nodes; shippers/syslog is among them, as its listener runs on node 0 and /metrics counts what that node
// received (each node's /metrics describes that node). The `one` mode runs a representative subset (writes, reads,
// explore, auth, web sessions). It runs apart from `npm test`, as `npm run test:cluster` (about 8 minutes on 2 cores,
// which `npm test` could not hold within its 10); `.ci/run` runs both.
//
// Left out, one line each (their contract rules are in the files above; the single-process run has them all):
// - process.test.ts: §1 for one process (first start's banner and curl line with its own URL, the CLI on its data
//   directory, SIGTERM and kill -9 of that process); a cluster's init prints the banner, cluster-process.test.ts kills.
// - observability.test.ts: /metrics and the access log describe one process (its LMDB file, segments, requests).
// - write-batching.test.ts: counts the blocks of one process's store (svc.entries.countBlocks).
// - query-fulltext.test.ts, hostile-values-storage.test.ts, postings-held.test.ts: one store's segments, postings
//   and key layout, read and changed directly.
// - limits-retention-sweeper.test.ts: drives one store's RetentionSweeper and reads its file size.
// - pipelining-reads.test.ts: a cluster node answers a read after a NATS barrier, so Bun closes a connection whose
//   next pipelined request comes meanwhile; the writes' rule (pipelining.test.ts) runs here.
// - alerts-eval, alerts-deliver, alerts-alertmanager, alerts-ui (§16): they run one process's evaluator and deliverer
//   passes on a clock of their own; cluster-alerts*.test.ts run a cluster's (one evaluating node, kill -9 of it).
// - alerts-crash.test.ts: kill -9 of one process while a rule fires; cluster-alerts-kill.test.ts kills a cluster's.
// - full-disk.test.ts (§14): mounts a small tmpfs for one process's data directory and fills it.
// - storage-report.test.ts, upgrade.test.ts (§15): one data directory's report, compaction and a fixture directory
//   written by an older version, opened by one process.
// - loki/tail.test.ts (§17): a Loki tail is a WebSocket on a listening server, which a TestSluice cluster does not
//   run; cluster-loki-tail.test.ts tails through a listening front that relays it to the partition's tail owner.
// - docs.test.ts: the guide's commands, run as a newcomer runs them against one process that `npm start` started.
// - binary, compose, crash, internal-error, ui-browser: the compiled binary, the composition root, kill -9 of one
//   process mid-write, injected storage faults, and a headless Chromium, all of one process.
import { expect, test } from "bun:test";
import { join } from "node:path";

const ROOT = join(import.meta.dir, "..", "..");
const e2e = (names: string[]) => names.map((f) => `test/e2e/${f}.test.ts`);

/** files whose rules hold through any front node, in three runs (each within its time limit on a busy machine) */
const ANY_FRONT = [
  e2e(["write", "auth", "admin", "query-errors", "query-semantics", "query-indexes", "explore", "read", "tail", "fuzz", "explore-fuzz"]),
  e2e(["query-fulltext-fresh", "query-needles", "query-slow", "limits-none", "limits-quota", "limits-retention", "hostile-values", "ui-session"]),
  e2e([
    "abuse",
    "pipelining",
    "tail-process",
    "tail-bounds",
    "cli-transfer",
    "alerts-api",
    "alerts-cli",
    ...["encodings", "es", "fuzz", "loki", "otlp", "syslog-ng"].map((f) => `shippers/${f}`),
    ...["read", "metric", "differential", "blocks", "grafana", "clients", "vmalert"].map((f) => `loki/${f}`),
  ]),
];
/** files that assert a rate figure, or one process's counts, exactly: one front node (two runs) */
const ONE_FRONT = [e2e(["limits-rate"]), e2e(["limits-process", "hostile-clients", "shippers/rules", "shippers/syslog"])];
/** the `one` mode's subset */
const THROUGH_ONE = e2e(["write", "read", "explore", "auth", "ui-session"]);

/** runSuite runs `bun test` on files on a cluster in `mode` and returns its exit code and the lines that tell. */
async function runSuite(mode: "round-robin" | "one", files: string[], fronts = 3) {
  const proc = Bun.spawn([process.execPath, "test", "--timeout", "60000", ...files], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_TEST_CLUSTER: mode, SLUICE_TEST_CLUSTER_FRONTS: String(fronts) },
    stdout: "pipe",
    stderr: "pipe",
  });
  const killer = setTimeout(() => proc.kill(9), 590_000);
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  clearTimeout(killer);
  const lines = (out + err).split("\n");
  const firstError = lines.findIndex((l) => l.startsWith("error"));
  const why = firstError >= 0 ? lines.slice(Math.max(0, firstError - 4), firstError + 40) : code === 0 ? [] : lines.slice(-40); // a crash: its last words
  return {
    code,
    // the first failure's message: a failing run says why, not only which tests
    failed: [...new Set(lines.filter((l) => l.startsWith("(fail)")))].concat(why),
    summary: lines.filter((l) => /^\s*\d+ (pass|fail)$/.test(l)),
  };
}

test.each(ANY_FRONT.map((files, i) => [i + 1, files] as const))(
  "the contract's e2e files pass on a cluster with calls round-robin through every front node (run %i of 3)",
  async (_run, files) => {
    const r = await runSuite("round-robin", files);
    expect({ failed: r.failed, code: r.code }).toEqual({ failed: [], code: 0 });
    expect(r.summary.join(" ")).toContain(" 0 fail");
  },
  600_000,
);

test.each(ONE_FRONT.map((files, i) => [i + 1, files] as const))(
  "the files that assert rate figures and one process's counts pass on a cluster of one front node, calls round-robin through the fronts (run %i of 2)",
  async (_run, files) => {
    const r = await runSuite("round-robin", files, 1);
    expect({ failed: r.failed, code: r.code }).toEqual({ failed: [], code: 0 });
    expect(r.summary.join(" ")).toContain(" 0 fail");
  },
  600_000,
);

test("the contract's e2e files pass on a cluster with every call through one node", async () => {
  const r = await runSuite("one", THROUGH_ONE);
  expect({ failed: r.failed, code: r.code }).toEqual({ failed: [], code: 0 });
  expect(r.summary.join(" ")).toContain(" 0 fail");
}, 600_000);
