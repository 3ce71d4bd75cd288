// serve: `sluice serve` in cluster mode: a cluster node behind Bun's HTTP server, stopped cleanly by SIGTERM/SIGINT.
import { hostname } from "node:os";
import { exitOnSignal } from "../signals.ts";
import type { Config } from "../config.ts";
import { holdWrite } from "../http/pipelining.ts";
import { planTable } from "../limits/plans-file.ts";
import { startSyslog } from "../syslog.ts";
import { lineLog } from "../turn.ts";
import { ClusterNode } from "./node.ts";
import { joinWhenReachable, listenWaiting } from "./waiting.ts";

/** startClusterServer runs a cluster node until a signal stops it; the returned stop() does the same for tests. */
export async function startClusterServer(config: Config, print: (text: string) => void = console.log) {
  const cluster = config.cluster!;
  if (config.syslog && !cluster.roles.includes("front"))
    throw new Error(
      `SLUICE_SYSLOG_TCP and SLUICE_SYSLOG_UDP need the front role: add front to SLUICE_ROLES of node ${cluster.nodeId}, or set them on a front node`,
    );
  const plans = planTable(config.plansFile); // a bad plans file stops the start here, not a try to join
  let listening = `http://localhost:${config.port}`;
  const log = (line: Record<string, unknown>) => console.error(JSON.stringify(line));
  let waiting: ReturnType<typeof listenWaiting> | undefined;
  let stopping: Promise<void> | undefined;
  let stop = () => (stopping ??= waiting ? waiting.stop() : Promise.resolve()); // told to stop before the node joined
  exitOnSignal(() => stop());
  const node = await joinWhenReachable(
    () =>
      ClusterNode.start({
        ...cluster,
        dataDir: config.dataDir,
        plans,
        adminToken: config.adminToken,
        ipRatePerMinute: config.ipRatePerMinute,
        trustProxyHops: config.trustProxyHops,
        accessLog: config.accessLog ? lineLog() : undefined,
        bodyTimeoutMs: config.bodyTimeoutSeconds * 1000,
        queryTimeoutMs: config.queryTimeoutSeconds * 1000,
        tail: { heartbeatMs: config.tailHeartbeatSeconds * 1000, maxPerKey: config.tailMaxPerKey },
        retentionSweepMs: config.retentionSweepSeconds * 1000,
        alertMinEveryMs: config.alertMinEveryMs,
        externalUrl: () => config.externalUrl ?? listening, // links in alert notices
      }),
    {
      log,
      stopped: () => stopping !== undefined,
      waiting: (why) => {
        waiting = listenWaiting({ port: config.port, hostname: config.host }, cluster.urls, why);
        listening = baseUrlOf(config.host, waiting.port);
        print(
          `Sluice listening on ${listening} (node ${cluster.nodeId}: waiting for NATS at ${cluster.urls.length} URL(s) of SLUICE_CLUSTER; /readyz answers 503 until it joins)`,
        );
      },
    },
  );
  if (!node) throw new Error("stopped before NATS could be reached");
  // the front listens as a single process's app does (Bun's router, the client's address for the per-IP limit); the
  // node's own step comes first, and a write that a pipelined request made Bun close the connection of is dropped
  // before it runs (http/pipelining.ts)
  const app = node.front.app
    .onRequest(({ request, server }) => {
      // a live tail is silent between heartbeats: it must outlive the idle timeout (the copy answering it cannot reach this server)
      if (request.url.includes("/logs/tail")) server?.timeout(request, 0);
      return node.before(request);
    })
    .onRequest(holdWrite)
    .listen({
      port: waiting?.port ?? config.port, // beside the waiting server, on the port it took
      hostname: config.host,
      maxRequestBodySize: Number.MAX_SAFE_INTEGER, // each route enforces its own limit while the body streams in
      idleTimeout: config.idleTimeoutSeconds,
    });
  const server = app.server!;
  if (waiting) {
    await Bun.sleep(10); // the waiting server accepts what reached it meanwhile: a connection left in its queue at stop is reset
    await waiting.stop();
  }
  const wildcard = config.host === "0.0.0.0" || config.host === "::";
  const baseUrl = baseUrlOf(config.host, server.port);
  listening = baseUrl;
  // the other nodes send reads for this node's copies straight here (peer.ts)
  node.advertise(cluster.advertiseUrl ?? `http://${wildcard ? hostname() : hostInUrl(config.host)}:${server.port}`);
  print(`Sluice listening on ${baseUrl} (node ${cluster.nodeId}: ${cluster.roles.join(", ")}; cluster ${cluster.urls.join(",")}; data in ${config.dataDir})`);
  // the syslog listeners write through the front as any write does: to the partition streams, answered by a copy's verdict
  const syslog = config.syslog ? await startSyslog(config.syslog, { ...node.front, log }).catch(stopOnFailure(server, node)) : undefined;
  if (syslog) print(`Syslog listening on ${syslog.addresses.join(" and ")}`);
  stop = () =>
    (stopping ??= (async () => {
      node.endStreams(); // a tail is a request that never finishes by itself
      await server.stop(false);
      await syslog?.stop(); // what the listeners received is written before the node lets go of NATS
      await node.stop();
    })());
  return { port: server.port, baseUrl, stop, node, syslog };
}

/** baseUrlOf is the URL the node is reached at on this host (localhost for a wildcard host). */
const baseUrlOf = (host: string, port: number | undefined) => `http://${host === "0.0.0.0" || host === "::" ? "localhost" : hostInUrl(host)}:${port}`;

/** hostInUrl writes a host as a URL holds it (an IPv6 address in brackets). */
const hostInUrl = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);

/** stopOnFailure stops the server and the node when a listener cannot start (its port taken), then fails the start. */
const stopOnFailure =
  (server: { stop(closeActive?: boolean): Promise<void> | void }, node: ClusterNode) =>
  async (e: unknown): Promise<never> => {
    await server.stop(true);
    await node.stop();
    throw e;
  };
