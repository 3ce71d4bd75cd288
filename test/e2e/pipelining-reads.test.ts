// HTTP pipelining on the real single process: reads pipelined with other requests are all answered, in order, because
// the process answers each at once. A cluster node answers a read after its barrier (a NATS round trip), so Bun closes
// the connection at the next pipelined request: the cluster suite leaves this file out (the writes' rule holds there).
import { describe, expect, test } from "bun:test";
import { exchange, pipelineServer, read, stored, write } from "../helpers/pipelining.ts";
import { WS } from "../helpers/sluice.ts";

pipelineServer();

describe("pipelines Bun answers whole", () => {
  test("reads in one socket write are all answered, in order, and the connection stays open", async () => {
    const payload = read("/healthz") + read(`${WS}/usage`) + read(`${WS}/logs?pageSize=10`) + read("/livez");
    const { answers, closed } = await exchange(payload, 4);
    expect(closed).toBe(false);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.parse(answers[0].body)).toEqual({ status: "ok" });
    expect(JSON.parse(answers[1].body)).toHaveProperty("used");
    expect(Array.isArray(JSON.parse(answers[2].body))).toBe(true);
    expect(JSON.parse(answers[3].body)).toEqual({ status: "ok" });
  });

  test("a write last in the pipeline, behind reads, is answered 201 in order and stored once", async () => {
    const payload = read("/healthz") + read(`${WS}/usage`) + write("last", 1);
    const { answers, closed } = await exchange(payload, 3);
    expect(closed).toBe(false);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 201]);
    expect(JSON.parse(answers[2].body)).toMatchObject({ action: "pipelined.1", tags: ["last"] });
    expect(await stored("last")).toBe(1);
  });
});
