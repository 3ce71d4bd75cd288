#!/usr/bin/env bun
// sluice: the command line. `serve` runs the server; the rest manage workspaces and keys on a data directory.
import { parseArgs } from "node:util";
import { loadConfig } from "../config.ts";
import { ApiError } from "../errors.ts";
import { planTable } from "../limits/plans-file.ts";
import { startServer } from "../server.ts";
import { compactInto, storageOf } from "../compose.ts";
import { ADMIN_COMMANDS, UsageError, runAdminCommand, type AdminOps, type CommandSpec } from "./admin.ts";
import { remoteAdmin } from "./admin-remote.ts";
import { ApiClient } from "./client.ts";
import { CLUSTER_USAGE, clusterCommand } from "./cluster.ts";
import { tailCommand } from "./tail.ts";
import { ALERTS_USAGE, alertsCommand } from "./alerts.ts";
import { exportEntries, importFile, progressBar } from "./transfer.ts";

const CONNECTION = {
  url: { type: "string" as const, description: "the server (default http://localhost:$SLUICE_PORT or :8080)" },
  key: { type: "string" as const, description: "an API key (default $SLUICE_API_KEY)" },
};

/** TRANSFER talks to a running server, so that entries pass the same checks, limits and indexes as any write. */
const TRANSFER: Record<string, Pick<CommandSpec, "usage" | "summary" | "options"> & { positionals: string[] }> = {
  import: {
    usage: "sluice import FILE [--url U] [--key K]",
    summary: "send the entries of FILE (NDJSON or a JSON array) in bulk batches; prints a summary",
    options: CONNECTION,
    positionals: ["FILE"],
  },
  export: {
    usage: "sluice export [--query Q] [--from T] [--to T] [--url U] [--key K]",
    summary: "write the entries matching a query and time range to stdout as NDJSON, newest first",
    options: {
      query: { type: "string", description: "a query-language expression, e.g. 'level=error tag=checkout'" },
      from: { type: "string", description: "RFC 3339, inclusive" },
      to: { type: "string", description: "RFC 3339, exclusive" },
      ...CONNECTION,
    },
    positionals: [],
  },
  tail: {
    usage: "sluice tail [--query Q] [--backfill N] [--url U] [--key K]",
    summary: "print matching entries as NDJSON as they arrive (a live tail); reconnects without gaps; Ctrl-C ends it",
    options: {
      query: { type: "string", description: "a query-language expression, e.g. 'level=error tag=checkout'" },
      backfill: { type: "string", description: "first print this many of the newest matching entries (0–1000)" },
      ...CONNECTION,
    },
    positionals: [],
  },
};

const STORAGE: Pick<CommandSpec, "usage" | "summary" | "options"> = {
  usage: "sluice storage",
  summary: "what storage costs: entries, raw JSON bytes, disk bytes and their ratio, per workspace environment and in total",
  options: {},
};

const COMPACT: Pick<CommandSpec, "usage" | "summary" | "options"> = {
  usage: "sluice compact --to DIR",
  summary:
    "write a compacted copy of the data directory to DIR (also while the server runs); stop the server and put it in place to return the space retention freed",
  options: { to: { type: "string", description: "a new or empty directory for the copy", required: true } },
};

const SERVE: Pick<CommandSpec, "usage" | "summary" | "options"> = {
  usage: "sluice serve [--port N] [--host H] [--cluster URLS --node-id ID [--roles front,query,storage]]",
  summary: "run the server (configuration from SLUICE_* variables; flags override them)",
  options: {
    port: { type: "string", description: "listen port (SLUICE_PORT, default 8080)" },
    host: { type: "string", description: "listen host (SLUICE_HOST, default 0.0.0.0)" },
    cluster: { type: "string", description: "NATS URLs, comma-separated: run as a cluster node (SLUICE_CLUSTER)" },
    "node-id": { type: "string", description: "this node's unique id in the cluster (SLUICE_NODE_ID)" },
    roles: { type: "string", description: "any of front, query, storage (SLUICE_ROLES, default all)" },
  },
};

function help(): string {
  const rows = [
    ["serve", SERVE.summary],
    ["cluster init|status|rebalance", "set up and watch a cluster on NATS JetStream (contract §13; --help for more)"],
    ["storage", STORAGE.summary],
    ["compact", COMPACT.summary],
    ["alerts list|create|test-channel", "list alert rules, channels, alerts; create them from a JSON file; test a channel (--help)"],
    ...Object.entries(ADMIN_COMMANDS).map(([name, c]) => [name, c.summary]),
    ...Object.entries(TRANSFER).map(([name, c]) => [name, c.summary]),
  ];
  const width = Math.max(...rows.map(([n]) => n.length)) + 2; // the longest name still leaves a gap before its summary
  return [
    "usage: sluice <command> [options] [--data-dir DIR]",
    "",
    "commands:",
    ...rows.map(([n, s]) => `  ${n.padEnd(width)}${s}`),
    "",
    "--data-dir DIR   the data directory (SLUICE_DATA_DIR, default ./data); works while the server runs",
    "--url U --admin-token T   in a cluster (SLUICE_CLUSTER), the workspaces and keys commands go to a node's admin API",
    "--help           help for any command, e.g. sluice keys create --help",
  ].join("\n");
}

function commandHelp(c: Pick<CommandSpec, "usage" | "summary" | "options">): string {
  const opts = Object.entries(c.options).map(([k, o]) => `  --${k.padEnd(14)}${o.description}${o.required ? " (required)" : ""}`);
  return [`usage: ${c.usage} [--data-dir DIR]`, "", c.summary, ...(opts.length ? ["", "options:", ...opts] : [])].join("\n");
}

/** splitGlobal takes --data-dir and --help out of the arguments, wherever they stand. */
function splitGlobal(argv: string[]) {
  const rest: string[] = [];
  let dataDir: string | undefined;
  let wantsHelp = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") wantsHelp = true;
    else if (a === "--data-dir") dataDir = argv[++i];
    else if (a.startsWith("--data-dir=")) dataDir = a.slice("--data-dir=".length);
    else rest.push(a);
  }
  return { rest, dataDir, wantsHelp };
}

/** printed prints a help text and gives the exit code of a request for help. */
function printed(text: string): number {
  console.log(text);
  return 0;
}

async function main(argv: string[]): Promise<number> {
  const { rest, dataDir, wantsHelp } = splitGlobal(argv);
  const [first, second] = rest;
  if (first === undefined) {
    console.log(help());
    return wantsHelp ? 0 : 2;
  }
  const env: Record<string, string | undefined> = { ...process.env, ...(dataDir ? { SLUICE_DATA_DIR: dataDir } : {}) };
  if (first === "serve") {
    if (wantsHelp) return printed(commandHelp(SERVE));
    const { values } = parseArgs({
      args: rest.slice(1),
      options: { port: { type: "string" }, host: { type: "string" }, cluster: { type: "string" }, "node-id": { type: "string" }, roles: { type: "string" } },
      strict: true,
    });
    const flags: Record<string, string | undefined> = {
      SLUICE_PORT: values.port,
      SLUICE_HOST: values.host,
      SLUICE_CLUSTER: values.cluster,
      SLUICE_NODE_ID: values["node-id"],
      SLUICE_ROLES: values.roles,
    };
    await startServer(loadConfig({ ...env, ...Object.fromEntries(Object.entries(flags).filter(([, v]) => v !== undefined)) }));
    return -1; // keep running until a signal
  }
  if (first === "cluster") {
    if (wantsHelp) return printed(`usage: ${CLUSTER_USAGE}`);
    return clusterCommand(rest.slice(1), env, planTable(loadConfig({ ...env, SLUICE_CLUSTER: undefined }).plansFile)); // the command is no node
  }
  if (first === "storage") {
    if (wantsHelp) return printed(commandHelp(STORAGE));
    console.log(JSON.stringify(await storageOf(loadConfig({ ...env, SLUICE_CLUSTER: undefined }).dataDir), null, 2));
    return 0;
  }
  if (first === "compact") {
    if (wantsHelp) return printed(commandHelp(COMPACT));
    const { values } = parseArgs({ args: rest.slice(1), options: { to: { type: "string" } }, strict: true });
    if (!values.to) throw new UsageError(`give the directory for the copy; usage: ${COMPACT.usage}`);
    const { before, after } = await compactInto(loadConfig({ ...env, SLUICE_CLUSTER: undefined }).dataDir, values.to);
    console.log(JSON.stringify({ to: values.to, before_bytes: before, after_bytes: after }, null, 2));
    return 0;
  }
  if (first === "alerts") {
    if (wantsHelp) return printed(`usage: ${ALERTS_USAGE}\n\ncreating needs a key with scope "*"`);
    const { values, positionals } = parseArgs({ args: rest.slice(1), options: CONNECTION, allowPositionals: true, strict: true });
    const key = (values.key as string | undefined) ?? env.SLUICE_API_KEY;
    if (!key) throw new UsageError(`give an API key with --key or SLUICE_API_KEY; usage: ${ALERTS_USAGE}`);
    const client = new ApiClient({ url: (values.url as string | undefined) ?? `http://localhost:${env.SLUICE_PORT || env.PORT || 8080}`, key });
    return alertsCommand(client, positionals, (text) => console.log(text));
  }
  if (first in TRANSFER) {
    const spec = TRANSFER[first];
    if (wantsHelp) return printed(commandHelp(spec));
    const { values, positionals } = parseArgs({ args: rest.slice(1), options: spec.options, allowPositionals: true, strict: true });
    if (positionals.length !== spec.positionals.length) throw new UsageError(`usage: ${spec.usage}`);
    const key = (values.key as string | undefined) ?? env.SLUICE_API_KEY;
    if (!key) throw new UsageError(`give an API key with --key or SLUICE_API_KEY; usage: ${spec.usage}`);
    const client = new ApiClient({ url: (values.url as string | undefined) ?? `http://localhost:${env.SLUICE_PORT || env.PORT || 8080}`, key });
    if (first === "tail") {
      const backfill = values.backfill === undefined ? 0 : Number(values.backfill);
      if (!Number.isInteger(backfill) || backfill < 0 || backfill > 1000)
        throw new UsageError(`--backfill must be a whole number from 0 to 1000; usage: ${spec.usage}`);
      const stop = new AbortController();
      process.once("SIGINT", () => stop.abort());
      process.once("SIGTERM", () => stop.abort());
      const url = (values.url as string | undefined) ?? `http://localhost:${env.SLUICE_PORT || env.PORT || 8080}`;
      await tailCommand(
        { url, key, query: values.query as string | undefined, backfill },
        (line) => process.stdout.write(`${line}\n`),
        (text) => console.error(`sluice tail: ${text}`),
        stop.signal,
      );
      return 0;
    }
    if (first === "import") {
      const onTerminal = process.stderr.isTTY;
      const summary = await importFile(client, positionals[0], onTerminal ? (d, t, s) => process.stderr.write(progressBar(d, t, s)) : undefined);
      if (onTerminal) process.stderr.write("\n");
      console.log(JSON.stringify(summary, null, 2));
      return summary.rejected > 0 ? 1 : 0;
    }
    const filter = { query: values.query as string | undefined, from: values.from as string | undefined, to: values.to as string | undefined };
    // awaited writes: process.exit drops what a pipe has not taken yet (a slow reader got the first 64 KiB)
    const n = await exportEntries(client, filter, (lines) => Bun.write(Bun.stdout, lines));
    console.error(`exported ${n} entries`);
    return 0;
  }
  const name = `${first} ${second ?? ""}`.trim();
  const spec = ADMIN_COMMANDS[name];
  if (!spec) {
    console.error(`sluice: unknown command "${name}"\n\n${help()}`);
    return 2;
  }
  if (wantsHelp) return printed(commandHelp(spec));
  const config = loadConfig({ ...env, SLUICE_CLUSTER: undefined }); // a command is no cluster node
  const { args, remote } = adminTarget(rest.slice(2), env);
  const out = await runAdminCommand(spec, args, config.dataDir, planTable(config.plansFile), remote);
  if (out !== undefined) console.log(JSON.stringify(out, null, 2));
  return 0;
}

/**
 * adminTarget: in a cluster (SLUICE_CLUSTER set, or --url given) the workspaces and keys commands go to a node's admin
 * API (--url, default http://localhost:$SLUICE_PORT; --admin-token, default $SLUICE_ADMIN_TOKEN), else to the data directory.
 */
function adminTarget(argv: string[], env: Record<string, string | undefined>): { args: string[]; remote?: AdminOps } {
  const args: string[] = [];
  let url: string | undefined;
  let token = env.SLUICE_ADMIN_TOKEN;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--url") url = argv[++i];
    else if (a.startsWith("--url=")) url = a.slice("--url=".length);
    else if (a === "--admin-token") token = argv[++i];
    else if (a.startsWith("--admin-token=")) token = a.slice("--admin-token=".length);
    else args.push(a);
  }
  if (!url && !env.SLUICE_CLUSTER) return { args };
  if (!token) throw new UsageError("in a cluster the workspaces and keys commands use the admin API: give --admin-token or SLUICE_ADMIN_TOKEN (and --url)");
  return { args, remote: remoteAdmin(url ?? `http://localhost:${env.SLUICE_PORT || env.PORT || 8080}`, token) };
}

try {
  const code = await main(process.argv.slice(2));
  if (code >= 0) process.exit(code);
} catch (e) {
  if (e instanceof UsageError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    console.error(`sluice: ${(e as Error).message}`);
    process.exit(2);
  }
  if (e instanceof ApiError) {
    console.error(JSON.stringify({ error_code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) }, null, 2));
    process.exit(1);
  }
  console.error(`sluice: ${(e as Error).message}`);
  process.exit(1);
}
