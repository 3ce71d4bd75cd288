// HTTP pipelining on the real server: several requests in one socket write. Bun.serve closes a connection when a
// request arrives behind one it is still answering, so a write there cannot be answered; it must not be stored either.
import { describe, expect, test } from "bun:test";
import { check, exchange, key, pipelineServer, read, sendAlone, stored, write } from "../helpers/pipelining.ts";
import { entry, WS } from "../helpers/sluice.ts";

pipelineServer();

describe("pipelined writes: unanswered, so not stored", () => {
  test("two writes in one socket write: the connection closes unanswered, neither is stored, and each sent again alone is stored once", async () => {
    const { answers, closed } = await exchange(write("two", 1) + write("two", 2), 2);
    expect(answers).toEqual([]);
    expect(closed).toBe(true);
    expect(await stored("two")).toBe(0);
    for (const n of [1, 2]) expect((await sendAlone("two", n)).status).toBe(201);
    expect(await stored("two")).toBe(2);
  });

  test("ten writes in one socket write: the connection closes unanswered and none is stored", async () => {
    const payload = Array.from({ length: 10 }, (_, n) => write("ten", n)).join("");
    const { answers, closed } = await exchange(payload, 10);
    expect(answers).toEqual([]);
    expect(closed).toBe(true);
    expect(await stored("ten")).toBe(0);
  });

  test("reads and writes mixed: the read ahead of the first write is answered, then the connection closes and nothing is stored", async () => {
    const payload = read("/healthz") + write("mixed", 1) + read(`${WS}/usage`) + write("mixed", 2);
    const { answers, closed } = await exchange(payload, 4);
    expect(answers.map((a) => a.status)).toEqual([200]);
    expect(JSON.parse(answers[0].body)).toEqual({ status: "ok" });
    expect(closed).toBe(true);
    expect(await stored("mixed")).toBe(0);
  });

  test("a bulk write whose body ends in the same read as a write pipelined behind it: unanswered, and none is stored", async () => {
    const body = JSON.stringify(Array.from({ length: 1_000 }, (_, n) => entry({ action: `pipelined.bulk.${n}`, tags: ["bulk"], message: "m".repeat(150) })));
    const bulk = `POST ${WS}/logs/bulk HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    const half = bulk.length - 1_000;
    // the head and most of the body first, so that the write is past its first hold; the rest comes with the next request
    const { answers, closed } = await exchange([bulk.slice(0, half), bulk.slice(half) + write("bulk", 1)], 2);
    expect(answers).toEqual([]);
    expect(closed).toBe(true);
    expect(await stored("bulk")).toBe(0);
  });
});

describe("pipelines Bun answers whole", () => {
  test("a check (POST /logs/validate stores nothing) is not held: it and the reads behind it are all answered, in order", async () => {
    const payload = check("checked") + read("/healthz") + check("checked") + read("/livez");
    const { answers, closed } = await exchange(payload, 4);
    expect(closed).toBe(false);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.parse(answers[0].body)).toMatchObject({ valid: true });
    expect(JSON.parse(answers[1].body)).toEqual({ status: "ok" });
    expect(await stored("checked")).toBe(0);
  });
});
