// syslog: the syslog listeners of contract §11, TCP (octet counting or newlines) and UDP, both off unless configured.
// Messages are gathered for an event-loop turn and stored in one write, into the workspace and environment of the
// key in SLUICE_SYSLOG_KEY; a message that cannot be parsed or stored is counted and listed, never fatal.
import type { Socket, TCPSocketListener, udp } from "bun";
import type { Authenticator } from "./auth/authenticate.ts";
import { ApiError } from "./errors.ts";
import type { Metrics } from "./http/observe.ts";
import { noteShipped } from "./http/shipper.ts";
import type { IngestService } from "./ingest/ingest.ts";
import type { Item } from "./ingest/protocols/item.ts";
import { SyslogFramer } from "./ingest/protocols/syslog-frames.ts";
import { parseSyslog } from "./ingest/protocols/syslog.ts";
import type { RejectionLog } from "./ingest/rejections.ts";
import { TurnQueue } from "./turn.ts";

export interface SyslogOptions {
  /** host:port of the TCP listener, or undefined for none */
  tcp?: string;
  /** host:port of the UDP listener, or undefined for none */
  udp?: string;
  /** the API key whose workspace and environment the messages go to */
  key: string;
  /** the zone of RFC 3164 timestamps */
  timeZone: string;
}

export interface SyslogParts {
  auth: Authenticator;
  ingest: IngestService;
  metrics: Metrics;
  rejections: RejectionLog;
  clock: () => number;
  log: (line: Record<string, unknown>) => void;
}

const BATCH_MAX = 1000; // messages a write at most

/** startSyslog opens the configured listeners; stop() closes them after storing what they received. */
export async function startSyslog(options: SyslogOptions, parts: SyslogParts) {
  const pending: Promise<void>[] = [];
  const queue = new TurnQueue<{ message: string; receivedMs: number }>((batch) => {
    for (let i = 0; i < batch.length; i += BATCH_MAX) {
      const p = store(batch.slice(i, i + BATCH_MAX), options, parts).finally(() => pending.splice(pending.indexOf(p), 1));
      pending.push(p);
    }
  });
  const receive = (message: string) => queue.push({ message, receivedMs: parts.clock() });
  const refuseOversized = (n: number) => {
    if (n > 0) parts.metrics.shipped.inc({ protocol: "syslog", outcome: "rejected", reason: "oversized" }, n);
  };

  const addresses: string[] = [];
  let tcp: TCPSocketListener<undefined> | undefined;
  if (options.tcp) {
    const { hostname, port } = hostPort(options.tcp, "SLUICE_SYSLOG_TCP");
    const framers = new WeakMap<Socket<undefined>, SyslogFramer>();
    tcp = Bun.listen({
      hostname,
      port,
      socket: {
        open: (socket) => void framers.set(socket, new SyslogFramer()),
        data: (socket, chunk) => {
          const { messages, oversized } = framers.get(socket)!.push(chunk);
          refuseOversized(oversized);
          for (const m of messages) receive(m);
        },
        close: (socket) => {
          for (const m of framers.get(socket)?.end() ?? []) receive(m);
        },
        error: () => {},
      },
    });
    addresses.push(`tcp ${hostname}:${tcp.port}`);
  }
  let udpSocket: udp.Socket<"buffer"> | undefined;
  if (options.udp) {
    const { hostname, port } = hostPort(options.udp, "SLUICE_SYSLOG_UDP");
    udpSocket = await Bun.udpSocket({
      hostname,
      port,
      socket: { data: (_socket, data) => receive(Buffer.from(data).toString("utf8")) },
    });
    addresses.push(`udp ${hostname}:${udpSocket.port}`);
  }
  return {
    tcpPort: tcp?.port,
    udpPort: udpSocket?.port,
    /** where it listens, as "tcp host:port" and "udp host:port" */
    addresses,
    /** stop closes the listeners and waits for the writes under way */
    async stop() {
      tcp?.stop(true);
      udpSocket?.close();
      await Bun.sleep(0); // the last turn's messages reach the queue's write
      await Promise.allSettled([...pending]);
    },
  };
}

/** store parses a turn's messages and writes those that pass; a refusal of the whole write is counted, never thrown. */
async function store(batch: { message: string; receivedMs: number }[], options: SyslogOptions, parts: SyslogParts): Promise<void> {
  const items: Item[] = batch.map((m) => parseSyslog(m.message, m.receivedMs, options.timeZone));
  const now = parts.clock();
  try {
    const caller = parts.auth.authenticate(new Headers({ "x-api-key": options.key }), now);
    const result = await parts.ingest.createItems(items, caller);
    await noteShipped(parts, "syslog", result, caller.workspace.id, caller.key.environment, now);
  } catch (e) {
    const reason = e instanceof ApiError ? (e.status === 429 ? "quota" : e.status === 401 || e.status === 403 ? "auth" : "other") : "other";
    parts.metrics.shippedRequests.inc({ protocol: "syslog", reason });
    parts.metrics.shipped.inc({ protocol: "syslog", outcome: "received", reason: "" }, items.length);
    parts.metrics.shipped.inc({ protocol: "syslog", outcome: "rejected", reason }, items.length);
    if (!(e instanceof ApiError)) parts.log({ level: "error", msg: "syslog messages could not be stored", error: String(e) });
  }
}

/** hostPort reads host:port ([::1]:514 too), failing with a message that names the setting. */
export function hostPort(value: string, name: string): { hostname: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(value.trim());
  const port = m ? Number(m[2]) : NaN;
  if (!m || m[1] === "" || port > 65535) throw new Error(`${name}=${JSON.stringify(value)} is not valid: set it to host:port, e.g. 127.0.0.1:5514`);
  return { hostname: m[1], port };
}
