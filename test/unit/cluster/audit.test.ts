// The replica audit of `sluice cluster status` (contract §13): every server's figures of a stream must be known and
// identical, without gaps; each problem names the server and the stream.
import { expect, test } from "bun:test";
import { auditStreams, type ServerView, type StreamView } from "../../../src/cluster/audit.ts";

const view = (server: string, streams: Record<string, StreamView>): ServerView => ({
  url: `http://${server}:8222`,
  server,
  streams: new Map(Object.entries(streams)),
});
const S = { stream: "SLUICE_P0", servers: ["s0", "s1", "s2"], gapless: true };
const whole = { first: 1, last: 10, messages: 10 };

test("identical figures on every server that holds the stream: no problem", () => {
  const [a] = auditStreams(
    [S],
    ["s0", "s1", "s2"].map((s) => view(s, { SLUICE_P0: whole })),
  );
  expect(a.problems).toEqual([]);
  expect(a.servers).toEqual(["s0", "s1", "s2"].map((server) => ({ server, ...whole })));
});

test.each([
  [
    "a replica behind",
    { first: 1, last: 8, messages: 8 },
    "server s2, stream SLUICE_P0: first 1, last 8, 8 messages, but server s0 has first 1, last 10, 10 messages",
  ],
  ["a replica with another first sequence", { first: 3, last: 10, messages: 8 }, "server s2, stream SLUICE_P0: first 3, last 10, 8 messages, but server s0"],
  ["a replica with a gap", { first: 1, last: 10, messages: 9 }, "server s2, stream SLUICE_P0: a gap (first 1, last 10, 9 messages)"],
])("%s is named with its server and stream", (_, odd, line) => {
  const [a] = auditStreams([S], [view("s0", { SLUICE_P0: whole }), view("s1", { SLUICE_P0: whole }), view("s2", { SLUICE_P0: odd })]);
  expect(a.problems.some((p) => p.startsWith(line))).toBe(true);
});

test("a server whose monitoring port does not answer is unknown, not agreeing", () => {
  const silent: ServerView = { url: "http://s2:8222", error: "no answer within 1000 ms" };
  const [a] = auditStreams([S], [view("s0", { SLUICE_P0: whole }), view("s1", { SLUICE_P0: whole }), silent]);
  expect(a.problems).toEqual(["server s2, stream SLUICE_P0: unknown, its monitoring port did not answer (http://s2:8222: no answer within 1000 ms)"]);
  expect(a.servers[2]).toEqual({ server: "s2", first: null, last: null, messages: null });
});

test("a server without the stream, or with no monitoring URL given, is a problem", () => {
  const [a] = auditStreams([S], [view("s0", { SLUICE_P0: whole }), view("s1", {})]);
  expect(a.problems).toEqual([
    "server s1, stream SLUICE_P0: the server holds no replica of the stream",
    "server s2, stream SLUICE_P0: unknown, no monitoring URL given belongs to it",
  ]);
});

test("an empty stream agrees whether a server says its first sequence is 0 or last + 1", () => {
  const [a] = auditStreams(
    [S],
    [
      view("s0", { SLUICE_P0: { first: 0, last: 0, messages: 0 } }),
      view("s1", { SLUICE_P0: { first: 1, last: 0, messages: 0 } }),
      view("s2", { SLUICE_P0: { first: 1, last: 0, messages: 0 } }),
    ],
  );
  expect(a.problems).toEqual([]);
  const [b] = auditStreams(
    [S],
    [
      view("s0", { SLUICE_P0: { first: 11, last: 10, messages: 0 } }),
      view("s1", { SLUICE_P0: { first: 11, last: 10, messages: 0 } }),
      view("s2", { SLUICE_P0: { first: 0, last: 0, messages: 0 } }),
    ],
  );
  expect(b.problems).toEqual(["server s2, stream SLUICE_P0: first 0, last 0, 0 messages, but server s0 has first 11, last 10, 0 messages"]);
});

test("a KV bucket's stream with a gap is no problem (a key's older values are deleted), but its servers must still agree", () => {
  const bucket = { stream: "KV_sluice_nodes", servers: ["s0", "s1", "s2"], gapless: false };
  const beats = { first: 27, last: 30, messages: 3 };
  const [a] = auditStreams(
    [bucket],
    ["s0", "s1", "s2"].map((s) => view(s, { KV_sluice_nodes: beats })),
  );
  expect(a.problems).toEqual([]);
  const [b] = auditStreams(
    [bucket],
    [view("s0", { KV_sluice_nodes: beats }), view("s1", { KV_sluice_nodes: beats }), view("s2", { KV_sluice_nodes: { first: 27, last: 29, messages: 3 } })],
  );
  expect(b.problems).toEqual(["server s2, stream KV_sluice_nodes: first 27, last 29, 3 messages, but server s0 has first 27, last 30, 3 messages"]);
});
