// server: opens a data directory, builds the app, listens, sweeps expired entries, and shuts down cleanly on SIGTERM/SIGINT.
import { exitOnSignal } from "./signals.ts";
import { lineLog } from "./turn.ts";
import { banner, bootstrap } from "./bootstrap.ts";
import { startClusterServer } from "./cluster/serve.ts";
import { compose } from "./compose.ts";
import type { Config } from "./config.ts";
import { holdWrite } from "./http/pipelining.ts";
import { planTable } from "./limits/plans-file.ts";
import { surviveFullDisk } from "./storage/disk.ts";
import { RetentionSweeper } from "./storage/retention.ts";
import { startSyslog } from "./syslog.ts";

/** startServer runs Sluice until a signal stops it; the returned stop() does the same for tests. */
export async function startServer(config: Config, print: (text: string) => void = console.log) {
  surviveFullDisk();
  if (config.cluster) return startClusterServer(config, print);
  const plans = planTable(config.plansFile); // a bad plans file stops the start here
  let listening = "http://localhost:8080"; // set once the server listens
  const s = compose({
    dataDir: config.dataDir,
    plans,
    adminToken: config.adminToken,
    ipRatePerMinute: config.ipRatePerMinute,
    trustProxyHops: config.trustProxyHops,
    accessLog: config.accessLog ? lineLog() : undefined,
    bodyTimeoutMs: config.bodyTimeoutSeconds * 1000,
    queryTimeoutMs: config.queryTimeoutSeconds * 1000,
    tail: { heartbeatMs: config.tailHeartbeatSeconds * 1000, maxPerKey: config.tailMaxPerKey },
    alertMinEveryMs: config.alertMinEveryMs,
    externalUrl: () => config.externalUrl ?? listening,
  });
  const orphans = s.meta.workspaces().filter((w) => !plans.has(w.plan));
  if (orphans.length) {
    await s.dbs.root.close();
    throw new Error(`workspace ${orphans[0].id} has plan ${JSON.stringify(orphans[0].plan)}, which the plan table lacks; add it to SLUICE_PLANS_FILE`);
  }
  const made = await bootstrap(s.meta, s.admin, config.adminToken);
  // a write that a pipelined request made Bun close the connection of is dropped before it runs (http/pipelining.ts)
  const app = s.app.onRequest(holdWrite).listen({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER, // each route enforces its own limit while the body streams in
    idleTimeout: config.idleTimeoutSeconds,
  });
  const server = app.server!;
  const shown = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const baseUrl = `http://${shown}:${server.port}`;
  listening = baseUrl;
  const intro = banner(made, baseUrl);
  print(`Sluice listening on ${baseUrl} (data in ${config.dataDir})${intro ? `\n${intro}` : ""}`);

  const syslog = config.syslog ? await startSyslog(config.syslog, { ...s, log: (line) => console.error(JSON.stringify(line)) }) : undefined;
  if (syslog) print(`Syslog listening on ${syslog.addresses.join(" and ")}`);

  const sweeper = new RetentionSweeper(s.entries, s.meta, (ws, nowMs) => plans.retentionFloor(ws.plan, nowMs));
  const sweepTimer = setInterval(() => {
    sweeper.sweep().catch((e) => console.error(JSON.stringify({ level: "error", msg: "retention sweep failed", error: String(e) })));
  }, config.retentionSweepSeconds * 1000);

  s.entries.startMerging(); // small blocks into parts (storage/merge/merge.ts)
  s.evaluator.start(); // alert rules (contract §16): evaluations, then their notices
  s.deliverer.start();

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      clearInterval(sweepTimer);
      await s.evaluator.stop(); // an evaluation under way stores its outcome and notices: the next start resumes them
      await s.deliverer.stop();
      s.tails.closeAll(); // a tail is a request that never finishes by itself
      await server.stop(false); // stop accepting; let in-flight requests finish
      await syslog?.stop(); // and store what the syslog listeners received
      await sweeper.idle(); // a sweep under way finishes its batches before storage closes
      await s.close(); // full-text segments and postings are stored: a restart has nothing to recover
      await Bun.sleep(0); // the last access-log lines are printed
    })());
  exitOnSignal(stop);
  return { port: server.port, baseUrl, stop };
}
