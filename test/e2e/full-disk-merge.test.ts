// A full disk while the background merge runs (contract §14, storage/merge/merge.ts): writes of small blocks fill a small
// tmpfs, the merge keeps trying to commit parts into it, and the process, its reads and every acknowledged entry stay;
// once space is freed the merge commits parts, and every count is still what was acknowledged, through a kill -9.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { join } from "node:path";
import { open as lmdbOpen } from "lmdb";
import { serverFailure, spawnServer, type ServerProcess } from "../helpers/process.ts";
import { mountSmallDisk, type SmallDisk } from "../helpers/small-disk.ts";

const DISK_MB = 40;
const BALLAST_MB = 6;
const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;
const SMALL = 200; // entries a write: under the merge's 256, so every write is a block the merge takes
const MAX_BATCHES = 2_000; // 40 MB holds far fewer: the loop ends at the first 503
const MERGE_DUE_MS = 15_000; // a block is merged once 10 s old, in passes 2 s apart
const FRONTIER_MS = -1; // the merge keeps how far it has looked under this key in `parts`, beside the parts

let disk: SmallDisk;
let dataDir: string;
let server: ServerProcess;
let key: string;
let batchNo = 0;
let partsWhenFull = 0;
const acknowledged: string[] = [];

beforeAll(async () => {
  disk = mountSmallDisk("sluice-full-disk-merge-", DISK_MB, BALLAST_MB);
  dataDir = disk.dataDir;
  server = await spawnServer(dataDir, { SLUICE_ACCESS_LOG: "off" });
  key = KEY.exec(server.banner)![1];
});

afterAll(async () => {
  server?.proc.kill(9);
  await server?.exited;
  disk?.unmount();
});

const batch = (marker: string) =>
  Array.from({ length: SMALL }, (_, i) => ({
    action: `fill.${marker}`,
    level: "info",
    message: `${marker} entry ${i} ${crypto.randomUUID()} ${crypto.randomUUID()} ${crypto.randomUUID()}`,
    clientTimestamp: new Date().toISOString(),
    metadata: { i, request: crypto.randomUUID() },
  }));

const post = (path: string, body: unknown) =>
  fetch(`${server.base}/api/v1/workspace${path}`, {
    method: "POST",
    headers: { "X-API-Key": key, "Content-Type": "application/json" },
    body: JSON.stringify(body),
  }).catch((e) => {
    throw serverFailure(server, `POST ${path}: ${e}`);
  });

const failure = (what: string) => serverFailure(server, what);

const count = async (query: string) => {
  const day = 86_400_000;
  const res = await post("/logs/hits", { from: new Date(Date.now() - day).toISOString(), to: new Date(Date.now() + day).toISOString(), step: "1d", query });
  if (res.status !== 200) throw failure(`POST /logs/hits answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { total: number }).total;
};

const readable = async (id: string) => (await fetch(`${server.base}/api/v1/workspace/logs/${id}`, { headers: { "X-API-Key": key } })).status;

/** alive checks that the server process still runs and answers its health check. */
async function alive() {
  if (server.proc.exitCode !== null) throw failure(`the server exited with code ${server.proc.exitCode}`);
  const res = await fetch(`${server.base}/healthz`).catch((e) => {
    throw failure(`GET /healthz: ${e}`);
  });
  expect(res.status).toBe(200);
}

/** partsStored counts the parts the server has committed, read from its data directory beside it. */
async function partsStored(): Promise<number> {
  const watch = lmdbOpen({ path: join(dataDir, "sluice.mdb"), maxDbs: 32, readOnly: true });
  try {
    return [...watch.openDB({ name: "parts" }).getKeys({ snapshot: false } as never)].filter((k) => (k as unknown[])[2] !== FRONTIER_MS).length;
  } finally {
    await watch.close();
  }
}

/** everyAcknowledged checks that the count and a sample of the acknowledged entries read back. */
async function everyAcknowledged() {
  const counted = await count("");
  if (counted !== acknowledged.length) throw failure(`counted ${counted} entries, ${acknowledged.length} were acknowledged`);
  for (const at of [0, 0.25, 0.5, 0.75, 1]) {
    const id = acknowledged[Math.min(acknowledged.length - 1, Math.floor(at * acknowledged.length))];
    const status = await readable(id);
    if (status !== 200) throw failure(`acknowledged entry ${id} (${Math.round(at * 100)}% in) answered ${status}`);
  }
}

test("a full disk during the merge: writes answer 503, the process stays, and every acknowledged entry reads while merges are due", async () => {
  let refused: Response | undefined;
  for (let n = 0; n < MAX_BATCHES && !refused; n++) {
    const res = await post("/logs/bulk", batch(`m${++batchNo}z`));
    if (res.status === 201) acknowledged.push(...((await res.json()) as { ids: string[] }).ids);
    else refused = res;
  }
  if (refused?.status !== 503)
    throw failure(`${acknowledged.length} entries acknowledged, then ${refused ? `${refused.status}: ${await refused.text()}` : "no refusal"}`);
  await refused.arrayBuffer();
  await Bun.sleep(MERGE_DUE_MS); // every block written is due: the merge has tried them on the full disk
  await alive();
  await everyAcknowledged();
  partsWhenFull = await partsStored();
}, 120_000);

test("once space is freed the merge commits parts, and every count is what was acknowledged, also after a kill -9", async () => {
  disk.freeBallast(1);
  let parts = partsWhenFull;
  for (const deadline = Date.now() + MERGE_DUE_MS * 2; Date.now() < deadline && parts === partsWhenFull; await Bun.sleep(500)) parts = await partsStored();
  expect(parts).toBeGreaterThan(partsWhenFull);
  await alive();
  await everyAcknowledged();
  expect(await count(`action="fill.m1z"`)).toBe(SMALL);

  server.proc.kill(9);
  await server.exited;
  server = await spawnServer(dataDir, { SLUICE_ACCESS_LOG: "off" });
  await everyAcknowledged();
  expect((await post("/logs/bulk", batch("after"))).status).toBe(201);
}, 120_000);
