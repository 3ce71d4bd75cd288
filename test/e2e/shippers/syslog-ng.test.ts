// Contract §11: Debian's syslog-ng, run as a foreground child with its own config, pid, control and persist files,
// forwards what `logger` sends it to the Elasticsearch bulk route with its elasticsearch-http() destination.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Subprocess } from "bun";
import { removeDir } from "../../helpers/sluice.ts";
import { listen, type Listening, storedEntries, until } from "../../helpers/shippers.ts";

let l: Listening;
let dir: string;
let key: string;
let port: number;
let syslogNg: Subprocess<"ignore", "pipe", "pipe">;
let output = "";

/** freePort asks the system for a port nobody listens on (syslog-ng binds it itself). */
const freePort = () =>
  new Promise<number>((resolve) => {
    const server = createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });

beforeAll(async () => {
  l = listen();
  key = await (await l.s.workspace()).key("development", "rw");
  dir = mkdtempSync(join(tmpdir(), "sluice-syslog-ng-"));
  port = await freePort();
  // docs/sending-logs.md's destination, with a batch of one line so the test need not wait for a batch to fill
  writeFileSync(
    join(dir, "syslog-ng.conf"),
    `@version: 3.38
@include "scl.conf"
options { stats_freq(0); };
source s_net { network(ip("127.0.0.1") port(${port}) transport("tcp") flags(syslog-protocol)); };
destination d_sluice {
  elasticsearch-http(
    url("${l.base}/es/_bulk")
    index("syslog")
    type("")
    user("syslog-ng")
    password("${key}")
    batch-lines(1)
    template("$(format-json @timestamp=\${ISODATE} message=\${MESSAGE} log.level=\${LEVEL} event.action=\${PROGRAM} host.name=\${HOST})")
  );
};
log { source(s_net); destination(d_sluice); };
`,
  );
  syslogNg = Bun.spawn(
    [
      "syslog-ng",
      "--foreground",
      "--stderr",
      "--no-caps",
      `--cfgfile=${join(dir, "syslog-ng.conf")}`,
      `--pidfile=${join(dir, "syslog-ng.pid")}`,
      `--control=${join(dir, "syslog-ng.ctl")}`,
      `--persist-file=${join(dir, "syslog-ng.persist")}`,
    ],
    { stdin: "ignore", stdout: "pipe", stderr: "pipe" },
  );
  void new Response(syslogNg.stderr).text().then((t) => (output += t));
  // ready once its source accepts connections
  await until(async () => {
    const proc = Bun.spawn(["logger", "-n", "127.0.0.1", "-P", String(port), "-T", "--rfc5424", "-t", "probe", "probe"], { stderr: "ignore" });
    return (await proc.exited) === 0 ? true : undefined;
  }, 15_000);
}, 30_000);
afterAll(async () => {
  syslogNg?.kill("SIGTERM");
  await syslogNg?.exited;
  await l.stop();
  removeDir(l.s.dir);
  rmSync(dir, { recursive: true, force: true });
});

test("syslog-ng's elasticsearch-http() destination stores each message through POST /es/_bulk with the mapping", async () => {
  const proc = Bun.spawn(["logger", "-n", "127.0.0.1", "-P", String(port), "-T", "--rfc5424", "-p", "mail.err", "-t", "postfix", "relay refused"]);
  expect(await proc.exited).toBe(0);
  const e = await until(async () => (await storedEntries(l.s, key)).find((x) => x.message === "relay refused"), 20_000).catch((err) => {
    throw new Error(`${err}; syslog-ng said: ${output}`);
  });
  expect(e).toMatchObject({ action: "postfix", level: "error", metadata: { log: { level: "err" }, event: { action: "postfix" } } });
  expect(typeof (e.metadata?.host as { name?: unknown })?.name).toBe("string");
  expect(Math.abs(Date.parse(e.client_timestamp) - Date.now())).toBeLessThan(60_000);
});
