// HTTP pipelining on the real server, shared by pipelining*.test.ts: a server for the file, raw requests, and one
// socket write of several of them, read back answer by answer.
import { afterAll, beforeAll, expect } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer, type ServerProcess } from "./process.ts";
import { entry, WS } from "./sluice.ts";

const WAIT_MS = 3_000; // a socket that neither answers nor closes by then fails the test

let server: ServerProcess;
let dir: string;
let port: number;
/** the first key the server made, once it has started (a live binding) */
export let key: string;
/** pipelineServer starts the server for a test file (beforeAll) and kills it after (afterAll). */
export function pipelineServer() {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sluice-pipelining-"));
    server = await spawnServer(dir, { SLUICE_ACCESS_LOG: "off", SLUICE_IP_RATE_PER_MIN: "-1" });
    port = Number(new URL(server.base).port);
    key = /API key \(shown only now\):\s+(sl_\S+)/.exec(server.banner)![1];
  }, 60_000);
  afterAll(() => {
    server?.proc.kill(9);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
}

export const write = (tag: string, n: number) => {
  const body = JSON.stringify(entry({ action: `pipelined.${n}`, tags: [tag] }));
  return `POST ${WS}/logs HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};
export const read = (path: string) => `GET ${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\n\r\n`;
export const check = (tag: string) => {
  const body = JSON.stringify(entry({ tags: [tag] }));
  return `POST ${WS}/logs/validate HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
};

export interface Answer {
  status: number;
  body: string;
}

/** exchange sends payload in one socket write (or its parts 50 ms apart) and reads answers until `expected` have come or the server closes the connection. */
export function exchange(payload: string | string[], expected: number): Promise<{ answers: Answer[]; closed: boolean }> {
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
export function parseAnswer(buffer: Buffer): { answer: Answer; length: number } | undefined {
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
export async function stored(tag: string): Promise<number> {
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

export const sendAlone = (tag: string, n: number) =>
  fetch(`${server.base}${WS}/logs`, {
    method: "POST",
    headers: { "x-api-key": key, "content-type": "application/json" },
    body: JSON.stringify(entry({ action: `pipelined.${n}`, tags: [tag] })),
  });
