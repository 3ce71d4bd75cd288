// server: opens a data directory, builds the app, listens, and shuts down cleanly on SIGTERM/SIGINT.
import { buildApp, services } from "./app.ts";
import { banner, bootstrap } from "./bootstrap.ts";
import type { Config } from "./config.ts";
import { PlanTable } from "./limits/plans.ts";
import { openDatabases } from "./storage/db.ts";

/** startServer runs Sluice until a signal stops it; the returned stop() does the same for tests. */
export async function startServer(config: Config, print: (text: string) => void = console.log) {
  const dbs = openDatabases(config.dataDir);
  const plans = new PlanTable();
  const deps = { dbs, plans, adminToken: config.adminToken };
  const s = services(deps);
  const made = await bootstrap(s.meta, s.admin, config.adminToken);
  const app = buildApp(deps).listen({
    port: config.port,
    hostname: config.host,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER, // each route enforces its own limit while the body streams in
  });
  const server = app.server!;
  const shown = config.host === "0.0.0.0" || config.host === "::" ? "localhost" : config.host;
  const baseUrl = `http://${shown}:${server.port}`;
  const intro = banner(made, baseUrl);
  print(`Sluice listening on ${baseUrl} (data in ${config.dataDir})${intro ? `\n${intro}` : ""}`);

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      await server.stop(false); // stop accepting; let in-flight requests finish
      await dbs.root.flushed;
      await dbs.root.close();
    })());
  const onSignal = () => void stop().then(() => process.exit(0), () => process.exit(1));
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  return { port: server.port, baseUrl, stop };
}
