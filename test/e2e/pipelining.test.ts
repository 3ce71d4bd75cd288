// HTTP pipelining on the real server: several requests in one socket write. Bun.serve closes a connection when a
// request arrives behind one it is still answering, so a write there cannot be answered; it must not be stored either.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer, type ServerProcess } from "../helpers/process.ts";
import { entry, WS } from "../helpers/sluice.ts";

const WAIT_MS = 3_000; // a socket that neither answers nor closes by then fails the test

let server: ServerProcess;
let dir: string;
let port: number;
let key: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "sluice-pipelining-"));
  server = await spawnServer(dir, { SLUICE_ACCESS_LOG: "off", SLUICE_IP_RATE_PER_MIN: "-1" });
  port = Number(new URL(server.base).port);
  key = /API key \(shown only now\):\s+(sl_\S+)/.exec(server.banner)![1];
});
afterAll(() => {
  server?.proc.kill(9);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const write = (tag: string, n: number) => {
  const body = JSON.stringify(entry({ action: `pipelined.${n}`, tags: [tag] }));
  return `POST ${WS}/logs HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};
const read = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`;
const check = (tag: string) => {
  const body = JSON.stringify(entry({ tags: [tag] }));
  return `POST ${WS}/logs/validate HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

interface Answer {
  status: number;
  body: string;
}

/** exchange sends payload in one socket write (or its parts 50 ms apart) and reads answers until `expected` have come or the server closes the connection. */
function exchange(payload: string | string[], expected: number): Promise<{ answers: Answer[]; closed: boolean }> {
  return new Promise((resolve, reject) => {
    const parts = typeof payload === "string" ? [payload] : payload; // parts after the first go 50 ms apart
    const sock = connect(port, "127.0.0.1", () => {
      for (const [i, part] of parts.entries()) setTimeout(() => sock.write(part), 50 * i);
    });
    let buffer: Buffer = Buffer.alloc(0);
    const answers: Answer[] = [];
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ answers, closed });
    };
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`no answer and no close within ${WAIT_MS} ms; got ${answers.length} answers`));
    }, WAIT_MS);
    sock.on("error", () => {}); // a reset is a close, judged by the answers
    sock.on("close", () => finish(true));
    sock.on("data", (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      for (let answer = parseAnswer(buffer); answer; answer = parseAnswer(buffer)) {
        answers.push(answer.answer);
        buffer = buffer.subarray(answer.length);
      }
      if (answers.length === expected) finish(false);
    });
  });
}

/** parseAnswer reads one whole response with a Content-Length off the front of buffer, or undefined if it has not all come. */
function parseAnswer(buffer: Buffer): { answer: Answer; length: number } | undefined {
  const end = buffer.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = buffer.subarray(0, end).toString("latin1");
  const size = /\r\ncontent-length: *(\d+)/i.exec(head);
  if (!size) throw new Error(`an answer without Content-Length: ${head}`);
  const length = end + 4 + Number(size[1]);
  if (buffer.length < length) return undefined;
  return { answer: { status: Number(head.split(" ")[1]), body: buffer.subarray(end + 4, length).toString() }, length };
}

/** stored counts the entries tagged `tag`, once a write sent after them is answered: it is committed after them. */
async function stored(tag: string): Promise<number> {
  const barrier = await fetch(`${server.base}${WS}/logs`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(entry({ action: "pipelined.barrier" })),
  });
  expect(barrier.status).toBe(201);
  const r = await fetch(`${server.base}${WS}/logs?tags=${tag}&pageSize=100`, { headers: { "x-api-key": key } });
  expect(r.status).toBe(200);
  return ((await r.json()) as unknown[]).length;
}

const sendAlone = (tag: string, n: number) =>
  fetch(`${server.base}${WS}/logs`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(entry({ action: `pipelined.${n}`, tags: [tag] })),
  });

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

  test("a check (POST /logs/validate stores nothing) is not held: it and the reads behind it are all answered, in order", async () => {
    const payload = check("checked") + read("/healthz") + check("checked") + read("/livez");
    const { answers, closed } = await exchange(payload, 4);
    expect(closed).toBe(false);
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(JSON.parse(answers[0].body)).toMatchObject({ valid: true });
    expect(JSON.parse(answers[1].body)).toEqual({ status: "ok" });
    expect(await stored("checked")).toBe(0);
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
