// Crash safety (contract §1, §4): SIGKILL at random moments during concurrent bulk ingest, then a restart.
// Every batch answered 201 must be there exactly once and findable through every index and full text;
// a batch whose answer never arrived may have committed (the kill cut only the 201) or not, but never in part.
// The kill moments and batch shapes come from a seeded generator: CRASH_SEED=<n> replays the same choices
// (the kill still lands wherever the scheduler puts it).
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer, type ServerProcess } from "../helpers/process.ts";

const ROUNDS = 12;
const MIN_ROUNDS = 10;
const BUDGET_MS = 50_000; // past this, stop after MIN_ROUNDS
const CLIENTS = 4;
const KILL_AFTER_MS: [number, number] = [50, 400];
const BATCH_SIZE: [number, number] = [10, 400];
const LEVELS = ["trace", "debug", "info", "warn", "error", "fatal"] as const;
const KEY = /API key \(shown only now\):\s+(sl_development_rw_[A-Za-z0-9]+)/;
const SEED = Number(process.env.CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

interface Batch {
  round: number;
  /** one word (letters and digits) that occurs in this batch only: q<round>c<client>n<seq>z */
  marker: string;
  tag: string;
  level: (typeof LEVELS)[number];
  size: number;
  /** ids from the 201, in input order; undefined when no 201 was read */
  ids?: string[];
  /** an answer other than 201, which no valid batch should get */
  refused?: string;
  /** entries of this batch found after the last restart (0 or size when all is well) */
  present?: number;
}

/** rng is mulberry32: small, seeded, good enough to pick sizes and delays. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return { next, int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)) };
}

let dir: string | undefined;
const running: ServerProcess[] = [];
afterAll(() => {
  for (const s of running) s.proc.kill(9);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** start spawns the server on the shared data directory (made on first use). */
async function start(): Promise<ServerProcess> {
  dir ??= mkdtempSync(join(tmpdir(), "sluice-crash-"));
  const s = await spawnServer(dir, { SLUICE_IP_RATE_PER_MIN: "-1" }); // verification reads far more than 6,000 a minute
  running.push(s);
  return s;
}

function makeBatch(r: ReturnType<typeof rng>, round: number, client: number, seq: number): { batch: Batch; body: unknown[] } {
  const marker = `q${round}c${client}n${seq}z`;
  const batch: Batch = { round, marker, tag: `t-${marker}`, level: LEVELS[r.int(0, 5)], size: r.int(...BATCH_SIZE) };
  const pad = r.int(0, 600);
  const body = Array.from({ length: batch.size }, (_, i) => ({
    action: `crash.${marker}.${i}`,
    level: batch.level,
    clientTimestamp: "2026-11-22T10:00:00.000Z",
    message: `entry ${i} of ${marker} in round ${round}`,
    tags: [batch.tag, "crash"],
    metadata: { batch: marker, i, pad: "x".repeat((pad * (i + 1)) % 601) },
  }));
  return { batch, body };
}

/** ingest posts batches back to back until the server dies under it; returns the batches it sent. */
async function ingest(base: string, key: string, r: ReturnType<typeof rng>, round: number, client: number, dead: { yes: boolean }) {
  const sent: Batch[] = [];
  for (let seq = 0; !dead.yes; seq++) {
    const { batch, body } = makeBatch(r, round, client, seq);
    sent.push(batch);
    try {
      const res = await fetch(`${base}/api/v1/workspace/logs/bulk`, {
        method: "POST",
        headers: { "x-api-key": key, "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      if (res.status !== 201) batch.refused = `HTTP ${res.status}: ${text.slice(0, 300)}`;
      else batch.ids = (JSON.parse(text) as { ids: string[] }).ids;
    } catch {
      return sent; // the connection died with the server: this batch is unacknowledged
    }
  }
  return sent;
}

interface Found {
  id: string;
  action: string;
  level: string;
  tags: string[];
  metadata: { batch: string; i: number };
  server_timestamp: string;
}

/** query pages through POST /logs/query with pageSize 100 and the cursor headers. */
async function query(base: string, key: string, q: string, maxPages: number): Promise<Found[]> {
  const all: Found[] = [];
  let cursor: { cursorID: string; cursorTS: string } | undefined;
  for (let page = 0; page < maxPages; page++) {
    const res = await fetch(`${base}/api/v1/workspace/logs/query`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify({ query: q, pageSize: 100, ...cursor }),
    });
    if (res.status !== 200) throw new Error(`query ${JSON.stringify(q)} answered ${res.status}: ${await res.text()}`);
    all.push(...((await res.json()) as Found[]));
    const id = res.headers.get("x-next-cursor-id");
    const ts = res.headers.get("x-next-cursor-ts");
    if (!id || !ts) return all;
    cursor = { cursorID: id, cursorTS: ts };
  }
  throw new Error(`query ${JSON.stringify(q)} still had pages after ${maxPages}: entries repeat or too many match`);
}

/** findLogs pages through GET /logs with the simple filters. */
async function findLogs(base: string, key: string, params: Record<string, string>, maxPages: number): Promise<Found[]> {
  const all: Found[] = [];
  let cursor: Record<string, string> = {};
  for (let page = 0; page < maxPages; page++) {
    const qs = new URLSearchParams({ ...params, pageSize: "100", ...cursor });
    const res = await fetch(`${base}/api/v1/workspace/logs?${qs}`, { headers: { "x-api-key": key } });
    if (res.status !== 200) throw new Error(`GET /logs?${qs} answered ${res.status}: ${await res.text()}`);
    all.push(...((await res.json()) as Found[]));
    const id = res.headers.get("x-next-cursor-id");
    const ts = res.headers.get("x-next-cursor-ts");
    if (!id || !ts) return all;
    cursor = { cursorID: id, cursorTS: ts };
  }
  throw new Error(`GET /logs ${JSON.stringify(params)} still had pages after ${maxPages}`);
}

/** pool runs fn over items with at most `width` at a time. */
async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

/**
 * checkBatch looks the batch up through the tag postings, full text, the action dictionary, level + tag and
 * GET /logs, and lists every way the answers break "all or nothing, exactly once". Sets batch.present.
 */
async function checkBatch(base: string, key: string, b: Batch, problems: string[]) {
  const maxPages = Math.ceil(b.size / 100) + 2;
  const views: [string, Found[]][] = [
    [`tag=${b.tag}`, await query(base, key, `tag=${b.tag}`, maxPages)],
    [`free word ${b.marker}`, await query(base, key, b.marker, maxPages)],
    [`action~${b.marker}`, await query(base, key, `action~${b.marker}`, maxPages)],
    [`message@${b.marker}`, await query(base, key, `message@${b.marker}`, maxPages)],
    [`level=${b.level} tag=${b.tag}`, await query(base, key, `level=${b.level} tag=${b.tag}`, maxPages)],
    [`GET /logs?tags&levels`, await findLogs(base, key, { tags: b.tag, levels: b.level }, maxPages)],
  ];
  const what = `batch ${b.marker} (round ${b.round}, ${b.size} entries, ${b.ids ? "acknowledged" : "unacknowledged"})`;
  const counts = views.map(([, found]) => found.length);
  for (const [how, found] of views) {
    const ids = new Set(found.map((e) => e.id));
    if (ids.size !== found.length) problems.push(`${what}: ${how} returns ${found.length - ids.size} duplicate ids`);
    const foreign = found.filter((e) => e.metadata?.batch !== b.marker || !e.tags.includes(b.tag) || e.level !== b.level);
    if (foreign.length) problems.push(`${what}: ${how} returns ${foreign.length} entries of other batches, e.g. ${foreign[0].action}`);
    const positions = new Set(found.map((e) => e.metadata?.i));
    if (found.length !== 0 && (found.length !== b.size || positions.size !== b.size)) {
      problems.push(`${what}: ${how} finds ${found.length} entries at ${positions.size} distinct positions: a partial batch`);
    }
    if (b.ids) {
      const wrong = found.filter((e) => b.ids![e.metadata.i] !== e.id);
      if (found.length !== b.size) problems.push(`${what}: ${how} finds ${found.length} of its entries`);
      else if (wrong.length) problems.push(`${what}: ${how} finds ${wrong.length} entries whose id is not the acknowledged one`);
    }
  }
  if (new Set(counts).size !== 1) problems.push(`${what}: the indexes disagree: ${views.map(([how], i) => `${how} → ${counts[i]}`).join(", ")}`);
  b.present = counts[0];
}

/** recheck looks an already checked batch up again by tag and by full text: a later crash must not change it. */
async function recheck(base: string, key: string, b: Batch, problems: string[]) {
  const maxPages = Math.ceil(b.size / 100) + 2;
  for (const q of [`tag=${b.tag}`, b.marker]) {
    const found = await query(base, key, q, maxPages);
    const ids = new Set(found.map((e) => e.id));
    if (found.length !== b.present || ids.size !== found.length) {
      problems.push(`batch ${b.marker} (round ${b.round}) had ${b.present} entries; after a later crash ${q} finds ${found.length} (${ids.size} distinct)`);
    }
  }
}

/** checkIds reads every acknowledged id of the given batches with GET /logs/{id}. */
async function checkIds(base: string, key: string, batches: Batch[], problems: string[]) {
  const ids = batches.flatMap((b) => (b.ids ?? []).map((id) => [b, id] as const));
  await pool(ids, 32, async ([b, id]) => {
    const res = await fetch(`${base}/api/v1/workspace/logs/${id}`, { headers: { "x-api-key": key } });
    if (res.status !== 200) problems.push(`batch ${b.marker}: GET /logs/${id} answered ${res.status} for an acknowledged id`);
    else if ((await res.json()).id !== id) problems.push(`batch ${b.marker}: GET /logs/${id} returned another entry`);
  });
}

test("SIGKILL during concurrent bulk ingest keeps every acknowledged batch exactly once in every index and full text, and never leaves part of a batch", async () => {
  const began = performance.now();
  const r = rng(SEED);
  const batches: Batch[] = [];
  const problems: string[] = [];
  let key = "";
  let fresh: Batch[] = []; // batches of the last round, not yet checked
  const errors: string[] = []; // error lines the servers logged
  const noteErrors = async (s: ServerProcess) => {
    await Bun.sleep(20); // stderr joins the output once its pipe closes
    errors.push(
      ...s
        .output()
        .split("\n")
        .filter((l) => /"level":"error"|error:/i.test(l)),
    );
  };

  for (let round = 0; round <= ROUNDS; round++) {
    const s = await start();
    if (round === 0) key = KEY.exec(s.banner)![1];
    expect(key).toMatch(/^sl_development_rw_/);

    // after a crash: the last round's batches are whole or absent in every index, the earlier ones are
    // as they were, and usage counts exactly what is there
    if (round > 0) {
      await checkIds(s.base, key, fresh, problems);
      await pool(fresh, 8, (b) => checkBatch(s.base, key, b, problems));
      await pool(
        batches.filter((b) => !fresh.includes(b)),
        8,
        (b) => recheck(s.base, key, b, problems),
      );
      const usage = await (await fetch(`${s.base}/api/v1/workspace/usage`, { headers: { "x-api-key": key } })).json();
      const present = batches.reduce((n, b) => n + (b.present ?? 0), 0);
      if (usage.used !== present) problems.push(`after round ${round - 1}: /usage says ${usage.used} entries, ${present} are present`);
    }
    if (problems.length > 0 || round === ROUNDS || (round >= MIN_ROUNDS && performance.now() - began > BUDGET_MS)) {
      // the last restart also reads everything once in the global order: nothing beyond the known batches
      const all = await query(s.base, key, "", 10_000);
      const ids = new Set(all.map((e) => e.id));
      const known = new Set(batches.map((b) => b.marker));
      if (ids.size !== all.length) problems.push(`a full read returns ${all.length - ids.size} duplicate entries`);
      const stray = all.filter((e) => !known.has(e.metadata?.batch));
      if (stray.length) problems.push(`a full read returns ${stray.length} entries of no batch sent`);
      const present = batches.reduce((n, b) => n + (b.present ?? 0), 0);
      if (all.length !== present) problems.push(`a full read returns ${all.length} entries; the batches account for ${present}`);
      s.proc.kill("SIGTERM");
      await s.exited;
      await noteErrors(s);
      break;
    }

    const dead = { yes: false };
    const clients = Array.from({ length: CLIENTS }, (_, c) => ingest(s.base, key, rng(SEED + 1000 * round + c), round, c, dead));
    await Bun.sleep(r.int(...KILL_AFTER_MS));
    s.proc.kill("SIGKILL");
    dead.yes = true;
    const sent = (await Promise.all(clients)).flat();
    await s.exited;
    await noteErrors(s);
    for (const b of sent) if (b.refused) problems.push(`batch ${b.marker} was refused: ${b.refused}`);
    fresh = sent;
    batches.push(...sent);
  }

  const acked = batches.filter((b) => b.ids);
  const committedUnacked = batches.filter((b) => !b.ids && b.present === b.size);
  const context =
    `seed ${SEED}: ${batches.length} batches, ${acked.length} acknowledged (${acked.reduce((n, b) => n + b.size, 0)} entries), ` +
    `${committedUnacked.length} unacknowledged but whole; server errors: ${errors.join("\n").slice(0, 2000) || "none"}`;
  expect({ problems: problems.slice(0, 20), context: problems.length ? context : "" }).toEqual({ problems: [], context: "" });
  expect(new Set(batches.map((b) => b.round)).size).toBeGreaterThanOrEqual(MIN_ROUNDS); // killed at least MIN_ROUNDS times
  expect(acked.length).toBeGreaterThanOrEqual(MIN_ROUNDS / 2); // the load really ran: acknowledged batches to lose
}, 90_000);
