// A full disk (contract §14): the data directory sits on a small tmpfs, with ballast files beside it that the test
// removes to free space. Writes are answered 503 while nothing fits, the process and every read keep answering, and
// writes succeed again once space is freed; a kill -9 while full loses no acknowledged entry.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { serverFailure, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { mountSmallDisk, type SmallDisk } from "../helpers/small-disk.ts";

const DISK_MB = 40;
const BALLAST_MB = 6;
const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;
const ADMIN = /Admin token \(shown only now\):\s+(sla_[A-Za-z0-9]+)/;
const MAX_BATCHES = 600; // 40 MB holds far fewer batches than this: the loop ends at the first 503
/** filling the disk takes 2–4 s, longer on a loaded machine; a test that times out has its server killed by bun */
const SLOW_MS = 60_000;

let disk: SmallDisk;
let dataDir: string;
let server: ServerProcess;
let key: string;
let admin: string;
let batchNo = 0;
/** every id answered 201 */
const acknowledged: string[] = [];

beforeAll(async () => {
  disk = mountSmallDisk("sluice-full-disk-", DISK_MB, BALLAST_MB);
  dataDir = disk.dataDir;
  server = await spawnServer(dataDir, { SLUICE_ACCESS_LOG: "off" });
  key = KEY.exec(server.banner)![1];
  admin = ADMIN.exec(server.banner)![1];
});

afterAll(async () => {
  server?.proc.kill(9);
  await server?.exited;
  disk?.unmount();
});

/** batch is 400 distinct entries (~300 bytes each) marked with a word of their own. */
function batch(marker: string) {
  return Array.from({ length: 400 }, (_, i) => ({
    action: `fill.${marker}`,
    level: "info",
    message: `${marker} entry ${i} ${crypto.randomUUID()} ${crypto.randomUUID()} ${crypto.randomUUID()}`,
    clientTimestamp: new Date().toISOString(),
    metadata: { i, request: crypto.randomUUID(), marker },
  }));
}

const post = (path: string, body: unknown) =>
  fetch(`${server.base}/api/v1/workspace${path}`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).catch((e) => {
    throw serverFailure(server, `POST ${path}: ${e}`);
  });

/** fillUntilFull writes batches until one is refused, and returns that answer with the refused batch's marker. */
async function fillUntilFull(): Promise<{ res: Response; text: string; marker: string }> {
  for (let n = 0; n < MAX_BATCHES; n++) {
    const marker = `fill${++batchNo}z`;
    const res = await post("/logs/bulk", batch(marker));
    const text = await res.text();
    if (res.status === 201) acknowledged.push(...(JSON.parse(text) as { ids: string[] }).ids);
    else return { res, text, marker };
  }
  throw new Error(`${MAX_BATCHES} batches fit on a ${DISK_MB} MB disk`);
}

const count = async (query: string) => {
  const day = 86_400_000;
  const [from, to] = [new Date(Date.now() - day).toISOString(), new Date(Date.now() + day).toISOString()];
  const res = await post("/logs/hits", { from, to, step: "1d", query });
  expect(res.status).toBe(200);
  return ((await res.json()) as { total: number }).total;
};

const status = async (path: string, headers: Record<string, string> = {}) => (await fetch(`${server.base}${path}`, { headers })).status;

test(
  "a write that finds the disk full is answered 503 with Retry-After, says storage is full, and stores none of the batch",
  async () => {
    const { res, text, marker } = await fillUntilFull();
    expect(acknowledged.length).toBeGreaterThan(0);
    expect(res.status).toBe(503);
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0);
    const body = JSON.parse(text) as { error_code: string; message: string };
    expect(body.error_code).toBe("INTERNAL_LOG_SERVICE_ERROR");
    expect(body.message).toContain("storage is full");
    expect(await count(`action="fill.${marker}"`)).toBe(0);
  },
  SLOW_MS,
);

test("while the disk is full the process keeps running: reads, /metrics and the admin API answer, /readyz 503, /healthz 200", async () => {
  const single = await post("/logs", batch("single")[0]); // one entry may still fit in pages LMDB freed inside its file
  expect([201, 503]).toContain(single.status);
  if (single.status === 201) acknowledged.push(((await single.json()) as { id: string }).id);
  expect(server.proc.exitCode).toBeNull();
  expect(await status("/readyz")).toBe(503);
  expect(await status("/healthz")).toBe(200);
  expect(await status("/metrics")).toBe(200);
  expect(await status("/api/v1/admin/workspaces", { Authorization: `Bearer ${admin}` })).toBe(200);
  const last = acknowledged[acknowledged.length - 1];
  expect(await status(`/api/v1/workspace/logs/${last}`, { "X-API-Key": key })).toBe(200);
  expect(await count("")).toBe(acknowledged.length);
});

test(
  "once space is freed, writes succeed again within 10 s without a restart, and /readyz answers 200",
  async () => {
    disk.freeBallast(1);
    const until = Date.now() + 10_000;
    let stored: Response | undefined;
    while (Date.now() < until) {
      const res = await post("/logs/bulk", batch(`freed${++batchNo}z`));
      if (res.status === 201) {
        stored = res;
        break;
      }
      await res.arrayBuffer();
      await Bun.sleep(250);
    }
    expect(stored?.status).toBe(201);
    acknowledged.push(...((await stored!.json()) as { ids: string[] }).ids);
    // readiness commits a probe of its own (at most one a second): the indexes the write just queued may take the
    // room it needs for a moment, as they take it from any write, so it too has the 10 s
    let ready = await status("/readyz");
    while (ready !== 200 && Date.now() < until) {
      await Bun.sleep(250);
      ready = await status("/readyz");
    }
    expect(ready).toBe(200);
    expect(await count("")).toBe(acknowledged.length);
  },
  SLOW_MS,
);

test(
  "kill -9 while the disk is full loses no acknowledged entry and leaves a data directory that opens",
  async () => {
    const { res } = await fillUntilFull();
    expect(res.status).toBe(503);
    server.proc.kill(9);
    await server.exited;
    disk.freeBallast(2);
    server = await spawnServer(dataDir, { SLUICE_ACCESS_LOG: "off" });
    expect(await count("")).toBe(acknowledged.length);
    const sample = [acknowledged[0], acknowledged[Math.floor(acknowledged.length / 2)], acknowledged[acknowledged.length - 1]];
    for (const id of sample) expect(await status(`/api/v1/workspace/logs/${id}`, { "X-API-Key": key })).toBe(200);
    expect((await post("/logs", batch("after")[0])).status).toBe(201);
  },
  SLOW_MS,
);
