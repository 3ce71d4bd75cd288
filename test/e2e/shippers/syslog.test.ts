// Contract §11, syslog: util-linux `logger` sends RFC 5424 and RFC 3164 over TCP (octet counting and newlines) and UDP
// to the listeners, whose messages go to the workspace environment of SLUICE_SYSLOG_KEY.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect } from "node:net";
import { removeDir, startTestSluice, type TestSluice } from "../../helpers/sluice.ts";
import { storedEntries, until } from "../../helpers/shippers.ts";
import { startSyslog } from "../../../src/syslog.ts";

let s: TestSluice;
let key: string;
let syslog: Awaited<ReturnType<typeof startSyslog>>;
beforeAll(async () => {
  s = startTestSluice();
  key = await (await s.workspace()).key("production", "wo", { scopes: ["*"] });
  syslog = await startSyslog({ tcp: "127.0.0.1:0", udp: "127.0.0.1:0", key, timeZone: "UTC" }, { ...s.svc, log: () => {} });
});
afterAll(async () => {
  await syslog.stop();
  await s.close();
  removeDir(s.dir);
});

/** logger runs util-linux logger against the listeners with `args`. */
async function logger(args: string[]) {
  const proc = Bun.spawn(["logger", "-n", "127.0.0.1", ...args], { stdout: "pipe", stderr: "pipe" });
  const [code, err] = await Promise.all([proc.exited, new Response(proc.stderr).text()]);
  if (code !== 0) throw new Error(`logger ${args.join(" ")} exited ${code}: ${err}`);
}

/** arrived waits for the entry whose message is `message`. */
const arrived = (message: string) => until(async () => (await storedEntries(s, key)).find((e) => e.message === message));

test("RFC 5424 over TCP with octet counting: MSGID as action, severity as level, host/app/procid/facility in context, structured data in metadata", async () => {
  await logger([
    "-P",
    String(syslog.tcpPort),
    "-T",
    "--octet-count",
    "--rfc5424",
    "--msgid",
    "login",
    "--sd-id",
    "auth@32473",
    "--sd-param",
    'user="bob"',
    "-p",
    "auth.warning",
    "-t",
    "sshd",
    "-i",
    "octet counted",
  ]);
  const e = await arrived("octet counted");
  expect(e).toMatchObject({ action: "login", level: "warn", context: { app: "sshd", facility: "auth" }, metadata: { "auth@32473": { user: "bob" } } });
  expect(typeof e.context?.host).toBe("string");
  expect(typeof e.context?.procid).toBe("string");
  expect(Math.abs(Date.parse(e.client_timestamp) - Date.now())).toBeLessThan(60_000);
});

test("RFC 5424 over TCP with newline framing, without MSGID: APP-NAME as action", async () => {
  await logger(["-P", String(syslog.tcpPort), "-T", "--rfc5424", "-p", "local3.err", "-t", "billing", "newline framed"]);
  expect(await arrived("newline framed")).toMatchObject({
    action: "billing",
    level: "error",
    context: { app: "billing", facility: "local3" },
    metadata: { timeQuality: { tzKnown: "1" } },
  });
});

test("RFC 3164 over UDP: TAG as action, the timestamp read in the current year", async () => {
  await logger(["-P", String(syslog.udpPort), "-d", "--rfc3164", "-p", "daemon.crit", "-t", "cron", "over udp"]);
  const e = await arrived("over udp");
  expect(e).toMatchObject({ action: "cron", level: "fatal", context: { app: "cron", facility: "daemon" } });
  expect(Math.abs(Date.parse(e.client_timestamp) - Date.now())).toBeLessThan(60_000);
});

test("RFC 5424 over UDP at debug", async () => {
  await logger(["-P", String(syslog.udpPort), "-d", "--rfc5424", "-p", "user.debug", "-t", "app", "udp 5424"]);
  expect(await arrived("udp 5424")).toMatchObject({ action: "app", level: "debug" });
});

test("a line that is not syslog is counted and listed among the rejections, never fatal; the next line is stored", async () => {
  const socket = connect(syslog.tcpPort!, "127.0.0.1");
  await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
  socket.write("this is no syslog\n<14>1 2026-11-22T10:00:00.123Z h app - - - after garbage\n");
  socket.end();
  expect(await arrived("after garbage")).toMatchObject({ action: "app", client_timestamp: "2026-11-22T10:00:00.123Z" });
  const r = await s.call("GET", "/api/v1/workspace/ingest/rejections", { key });
  expect(r.status).toBe(200);
  expect(await r.json()).toEqual([expect.objectContaining({ protocol: "syslog", sample: "this is no syslog" })]);
  const metrics = await (await s.call("GET", "/metrics")).text();
  expect(metrics).toMatch(/sluice_shipper_entries_total\{protocol="syslog",outcome="rejected",reason="invalid_entry"\} 1/);
});
