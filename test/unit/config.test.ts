// Contract §1: configuration from the environment, with its defaults; a bad value names its variable.
import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { loadConfig } from "../../src/config.ts";

describe("loadConfig", () => {
  test("syslog is off unless SLUICE_SYSLOG_TCP or _UDP is set; then it needs SLUICE_SYSLOG_KEY and a real SLUICE_SYSLOG_TZ", () => {
    expect(loadConfig({ SLUICE_SYSLOG_KEY: "sl_x" }).syslog).toBeUndefined();
    expect(loadConfig({ SLUICE_SYSLOG_TCP: "127.0.0.1:5514", SLUICE_SYSLOG_KEY: "sl_x" }).syslog).toEqual({
      tcp: "127.0.0.1:5514",
      udp: undefined,
      key: "sl_x",
      timeZone: "UTC",
    });
    expect(() => loadConfig({ SLUICE_SYSLOG_UDP: "127.0.0.1:5514" })).toThrow("SLUICE_SYSLOG_KEY");
    expect(() => loadConfig({ SLUICE_SYSLOG_UDP: "127.0.0.1:5514", SLUICE_SYSLOG_KEY: "k", SLUICE_SYSLOG_TZ: "Mars/Olympus" })).toThrow("SLUICE_SYSLOG_TZ");
  });

  test("defaults: port 8080, host 0.0.0.0, data in ./data, no admin token or plans file, no trusted proxy, 6,000 requests/min per IP, sweep every 600 s, reads stopped after 30 s, no syslog, tails: a ping every 15 s and 10 per key", () => {
    expect(loadConfig({})).toEqual({
      port: 8080,
      host: "0.0.0.0",
      dataDir: resolve("./data"),
      adminToken: undefined,
      plansFile: undefined,
      trustProxyHops: 0,
      ipRatePerMinute: 6000,
      retentionSweepSeconds: 600,
      accessLog: true,
      idleTimeoutSeconds: 10,
      bodyTimeoutSeconds: 30,
      queryTimeoutSeconds: 30,
      syslog: undefined,
      tailHeartbeatSeconds: 15,
      tailMaxPerKey: 10,
      alertMinEveryMs: 10_000,
      externalUrl: undefined,
      cluster: undefined,
    });
  });
  test("PORT is the listen port when SLUICE_PORT is absent; SLUICE_PORT wins when both are set", () => {
    expect(loadConfig({ PORT: "9000" }).port).toBe(9000);
    expect(loadConfig({ PORT: "9000", SLUICE_PORT: "9100" }).port).toBe(9100);
  });
  test("every SLUICE_* variable is read", () => {
    const c = loadConfig({
      SLUICE_HOST: "127.0.0.1",
      SLUICE_DATA_DIR: "/tmp/x",
      SLUICE_ADMIN_TOKEN: "t",
      SLUICE_PLANS_FILE: "/p.json",
      SLUICE_TRUST_PROXY: "2",
      SLUICE_IP_RATE_PER_MIN: "-1",
      SLUICE_RETENTION_SWEEP_SECONDS: "5",
      SLUICE_ACCESS_LOG: "off",
      SLUICE_IDLE_TIMEOUT_SECONDS: "3",
      SLUICE_BODY_TIMEOUT_SECONDS: "4",
      SLUICE_QUERY_TIMEOUT_SECONDS: "6",
      SLUICE_TAIL_HEARTBEAT_SECONDS: "7",
      SLUICE_TAIL_MAX_PER_KEY: "2",
    });
    expect(c).toMatchObject({
      host: "127.0.0.1",
      dataDir: "/tmp/x",
      adminToken: "t",
      plansFile: "/p.json",
      trustProxyHops: 2,
      ipRatePerMinute: -1,
      retentionSweepSeconds: 5,
      accessLog: false,
      idleTimeoutSeconds: 3,
      bodyTimeoutSeconds: 4,
      queryTimeoutSeconds: 6,
      tailHeartbeatSeconds: 7,
      tailMaxPerKey: 2,
    });
  });
  test.each([
    ["SLUICE_PORT", "http"],
    ["SLUICE_PORT", "70000"],
    ["SLUICE_TRUST_PROXY", "-1"],
    ["SLUICE_IP_RATE_PER_MIN", "1.5"],
    ["SLUICE_RETENTION_SWEEP_SECONDS", "0"],
    ["SLUICE_QUERY_TIMEOUT_SECONDS", "0"],
  ])("a bad %s (%s) is refused with a message naming the variable and what it takes", (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^${name}=.*set it to a whole number from`));
  });
  test("SLUICE_CLUSTER turns on cluster mode with the node id and roles; without it there is no cluster", () => {
    expect(loadConfig({}).cluster).toBeUndefined();
    expect(loadConfig({ SLUICE_CLUSTER: "nats://a:4222, nats://b:4222", SLUICE_NODE_ID: "n1" }).cluster).toEqual({
      urls: ["nats://a:4222", "nats://b:4222"],
      nodeId: "n1",
      roles: ["front", "query", "storage"],
      advertiseUrl: undefined,
    });
    expect(loadConfig({ SLUICE_CLUSTER: "nats://a:4222", SLUICE_NODE_ID: "n1", SLUICE_ROLES: "front,query" }).cluster?.roles).toEqual(["front", "query"]);
    expect(() => loadConfig({ SLUICE_CLUSTER: "nats://a:4222" })).toThrow("SLUICE_NODE_ID");
    expect(() => loadConfig({ SLUICE_CLUSTER: "nats://a:4222", SLUICE_NODE_ID: "n1", SLUICE_ROLES: "front,reader" })).toThrow("SLUICE_ROLES");
  });
  test("SLUICE_ADVERTISE_URL is the http://host:port other nodes reach a node at; anything else is refused naming it", () => {
    const cluster = { SLUICE_CLUSTER: "nats://a:4222", SLUICE_NODE_ID: "n1" };
    expect(loadConfig({ ...cluster, SLUICE_ADVERTISE_URL: "http://10.0.0.7:3000" }).cluster?.advertiseUrl).toBe("http://10.0.0.7:3000");
    for (const bad of ["10.0.0.7:3000", "http://10.0.0.7:3000/api", "ftp://h:1"])
      expect(() => loadConfig({ ...cluster, SLUICE_ADVERTISE_URL: bad })).toThrow(/^SLUICE_ADVERTISE_URL=.*set it to the http:\/\/host:port/);
  });
});
