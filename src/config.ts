// config: the environment → a typed configuration (contract §1).
import { resolve } from "node:path";
import { isTimeZone } from "./time.ts";

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Admin token from SLUICE_ADMIN_TOKEN; when absent one is generated on first start. */
  adminToken: string | undefined;
  plansFile: string | undefined;
  trustProxyHops: number;
  /** requests per minute per client IP; -1 for none */
  ipRatePerMinute: number;
  retentionSweepSeconds: number;
  /** one JSON line per request on stdout */
  accessLog: boolean;
  /** a connection silent this long (or trickling its headers) is closed */
  idleTimeoutSeconds: number;
  /** a request body must arrive within this */
  bodyTimeoutSeconds: number;
  /** a read still running after this answers 400 (its time budget) */
  queryTimeoutSeconds: number;
  /** the syslog listeners (contract §11): host:port each, undefined when off, and the key and zone they use */
  syslog: { tcp: string | undefined; udp: string | undefined; key: string; timeZone: string } | undefined;
  /** a live tail sends `: ping` this often */
  tailHeartbeatSeconds: number;
  /** open live tails per key at most */
  tailMaxPerKey: number;
  /** cluster mode (contract §13): NATS URLs, this node's id and roles; undefined: the single process */
  cluster: ClusterConfig | undefined;
  /** the smallest `every` of an alert rule, ms (SLUICE_ALERT_MIN_EVERY, default 10s) */
  alertMinEveryMs: number;
  /** the address users reach Sluice at, for links in alert notices (SLUICE_EXTERNAL_URL); undefined: where it listens */
  externalUrl: string | undefined;
}

/** Role is a part a cluster node plays: front (writes), query (reads), storage (partition copies). */
export type Role = "front" | "query" | "storage";
export const ROLES: readonly Role[] = ["front", "query", "storage"];

export interface ClusterConfig {
  urls: string[];
  nodeId: string;
  roles: Role[];
  /** the URL other nodes reach this one at (SLUICE_ADVERTISE_URL); undefined: from SLUICE_HOST and the port */
  advertiseUrl: string | undefined;
}

/** loadConfig reads the SLUICE_* variables, failing with a message that names the bad one. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  return {
    port: integer(env, "SLUICE_PORT", integer(env, "PORT", 8080, 0, 65535), 0, 65535),
    host: env.SLUICE_HOST || "0.0.0.0",
    dataDir: resolve(env.SLUICE_DATA_DIR || "./data"),
    adminToken: env.SLUICE_ADMIN_TOKEN || undefined,
    plansFile: env.SLUICE_PLANS_FILE || undefined,
    trustProxyHops: integer(env, "SLUICE_TRUST_PROXY", 0, 0, 100),
    ipRatePerMinute: integer(env, "SLUICE_IP_RATE_PER_MIN", 6000, -1, 1e9),
    retentionSweepSeconds: integer(env, "SLUICE_RETENTION_SWEEP_SECONDS", 600, 1, 1e7),
    accessLog: !["0", "off", "false", "no"].includes((env.SLUICE_ACCESS_LOG ?? "on").toLowerCase()),
    idleTimeoutSeconds: integer(env, "SLUICE_IDLE_TIMEOUT_SECONDS", 10, 1, 255),
    bodyTimeoutSeconds: integer(env, "SLUICE_BODY_TIMEOUT_SECONDS", 30, 1, 3600),
    queryTimeoutSeconds: integer(env, "SLUICE_QUERY_TIMEOUT_SECONDS", 30, 1, 3600),
    syslog: syslogConfig(env),
    tailHeartbeatSeconds: integer(env, "SLUICE_TAIL_HEARTBEAT_SECONDS", 15, 1, 3600),
    tailMaxPerKey: integer(env, "SLUICE_TAIL_MAX_PER_KEY", 10, 1, 10_000),
    cluster: clusterConfig(env),
    alertMinEveryMs: duration(env, "SLUICE_ALERT_MIN_EVERY", 10_000),
    externalUrl: env.SLUICE_EXTERNAL_URL?.trim().replace(/\/$/, "") || undefined,
  };
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

function duration(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const m = /^([0-9]{1,9})(ms|s|m|h|d)$/.exec(raw);
  if (!m || Number(m[1]) === 0) throw new Error(`${name}=${JSON.stringify(raw)} is not valid: set it to a duration such as 10s (units ms, s, m, h, d)`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

/** clusterConfig reads SLUICE_CLUSTER, SLUICE_NODE_ID, SLUICE_ROLES and SLUICE_ADVERTISE_URL; without SLUICE_CLUSTER there is no cluster. */
export function clusterConfig(env: Record<string, string | undefined>): ClusterConfig | undefined {
  const urls = (env.SLUICE_CLUSTER ?? "")
    .split(",")
    .map((u) => u.trim())
    .filter(Boolean);
  if (urls.length === 0) return undefined;
  const nodeId = env.SLUICE_NODE_ID?.trim() ?? "";
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(nodeId))
    throw new Error(`SLUICE_NODE_ID=${JSON.stringify(nodeId)} is not valid: with SLUICE_CLUSTER, give each node a unique id of letters, digits, - and _`);
  const roles = (env.SLUICE_ROLES || ROLES.join(",")).split(",").map((r) => r.trim());
  const bad = roles.find((r) => !ROLES.includes(r as Role));
  if (bad !== undefined || roles.length === 0)
    throw new Error(`SLUICE_ROLES=${JSON.stringify(env.SLUICE_ROLES)} is not valid: set it to any of front, query, storage, comma-separated`);
  const advertiseUrl = env.SLUICE_ADVERTISE_URL?.trim() || undefined;
  if (advertiseUrl !== undefined && !/^https?:\/\/[^/\s]+$/.test(advertiseUrl))
    throw new Error(
      `SLUICE_ADVERTISE_URL=${JSON.stringify(advertiseUrl)} is not valid: set it to the http://host:port the other nodes reach this node at, with no path`,
    );
  return { urls, nodeId, roles: [...new Set(roles as Role[])], advertiseUrl };
}

function syslogConfig(env: Record<string, string | undefined>): Config["syslog"] {
  const tcp = env.SLUICE_SYSLOG_TCP || undefined;
  const udp = env.SLUICE_SYSLOG_UDP || undefined;
  if (!tcp && !udp) return undefined;
  const key = env.SLUICE_SYSLOG_KEY?.trim();
  if (!key)
    throw new Error(
      "SLUICE_SYSLOG_TCP or SLUICE_SYSLOG_UDP is set but SLUICE_SYSLOG_KEY is not: set it to a key with logs:write, whose workspace and environment get the messages",
    );
  const timeZone = env.SLUICE_SYSLOG_TZ || "UTC";
  if (!isTimeZone(timeZone))
    throw new Error(`SLUICE_SYSLOG_TZ=${JSON.stringify(timeZone)} is not a time zone: set it to an IANA name such as Europe/Paris, or UTC`);
  return { tcp, udp, key, timeZone };
}

function integer(env: Record<string, string | undefined>, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new Error(`${name}=${JSON.stringify(raw)} is not valid: set it to a whole number from ${min} to ${max}`);
  }
  return n;
}
