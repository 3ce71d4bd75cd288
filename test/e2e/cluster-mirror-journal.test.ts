// The alerts mirror's journal and echo (cluster/meta-mirror.ts, behind contract §16's "killing a node neither loses nor
// repeats a notification"), on a real nats-server cluster: a transaction of several changes reaches every mirror whole, also
// when its writer was killed after the journal entry and before its keys; and a transaction resolves only once its
// own mirror has applied it back, so a value it replaced does not come back from an earlier echo.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Kvm, type KV } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pack } from "../../src/cluster/message.ts";
import { bucketKey, MetaMirror } from "../../src/cluster/meta-mirror.ts";
import { natsServers } from "../../src/cluster/names.ts";
import { openDatabases } from "../../src/storage/db.ts";
import { startNatsCluster, type NatsCluster } from "../helpers/nats.ts";

let nats: NatsCluster;
let nc: NatsConnection;
let kv: KV;
const dir = mkdtempSync(join(tmpdir(), "sluice-mirror-journal-"));
const envs: ReturnType<typeof openDatabases>[] = [];
const mirrors: MetaMirror[] = [];

beforeAll(async () => {
  nats = await startNatsCluster(3);
  nc = await connect({ ...natsServers(nats.urls), timeout: 5000 });
  // a meta leader may be elected before every peer has joined it: an R3 bucket then finds "no suitable peers" a moment
  for (let tries = 0; ; tries++) {
    try {
      kv = await new Kvm(nc).create("journal_test", { history: 1, replicas: 3 });
      break;
    } catch (e) {
      if (tries >= 100 || !String(e).includes("no suitable peers")) throw e;
      await Bun.sleep(200);
    }
  }
}, 60_000);
afterAll(async () => {
  for (const m of mirrors) await m.stop();
  for (const e of envs) await e.root.close();
  await nc?.close();
  await nats?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** mirror starts a mirror of the bucket into a fresh alerts database, as a node's alerts mirror is made. */
async function mirror(name: string) {
  const env = openDatabases(join(dir, name), () => {});
  envs.push(env);
  const m = new MetaMirror(env.alerts, kv, () => {}, undefined, { generation: false, journal: true, echoed: true });
  await m.start();
  mirrors.push(m);
  return { m, db: env.alerts };
}

/** until waits for a condition, checking every 20 ms, at most 5 s. */
async function until(ok: () => boolean) {
  const deadline = Date.now() + 5000;
  while (!ok() && Date.now() < deadline) await Bun.sleep(20);
  return ok();
}

test("a journal entry left by a writer killed before its keys reaches a mirror whole, and a fresh mirror replays it", async () => {
  const reader = await mirror("reader");
  // what a writer killed after its journal put leaves: the journal entry alone, none of its keys
  const changes = [
    { key: ["state", "w", "production", "r1", "f1"], value: { state: "firing", notifiedMs: 1 } },
    { key: ["outbox", "n1"], value: { id: "n1", channelId: "c1" } },
    { key: ["evaluated", "w", "production", "r1"], value: 1000 },
  ];
  await kv.put("journal.killed-writer", pack(changes));
  expect(await until(() => reader.db.get(["outbox", "n1"]) !== undefined)).toBe(true);
  for (const c of changes) expect(reader.db.get(c.key)).toEqual(c.value);
  const fresh = await mirror("fresh");
  for (const c of changes) expect(fresh.db.get(c.key)).toEqual(c.value);
  // a later change of one of those keys wins over the journal, also for a mirror started after both
  await kv.put(bucketKey(["evaluated", "w", "production", "r1"]), pack(2000));
  expect(await until(() => reader.db.get(["evaluated", "w", "production", "r1"]) === 2000)).toBe(true);
  const later = await mirror("later");
  expect(later.db.get(["evaluated", "w", "production", "r1"])).toBe(2000);
  expect(later.db.get(["outbox", "n1"])).toEqual({ id: "n1", channelId: "c1" });
}, 30_000);

test("a transaction through the proxy reaches the other mirror whole, and resolves once its own mirror has applied it back", async () => {
  const writer = await mirror("writer");
  const other = await mirror("other");
  const db = writer.m.proxy();
  for (let i = 0; i < 20; i++) {
    // an evaluation decides a notice; its settle removes it a moment later, as the deliverer does
    await db.transaction(() => {
      db.put(["state", "w", "production", "r2", `f${i}`], { state: "firing" });
      db.put(["outbox", `m${i}`], { id: `m${i}` });
    });
    expect(writer.m.sent(["outbox", `m${i}`])).toBe(true);
    await db.transaction(() => {
      db.remove(["outbox", `m${i}`]);
      db.put(["history", `h${i}`], { delivered: true });
    });
    // no echo of the put comes after the removal: the notice never shows again here
    for (let k = 0; k < 5; k++) {
      expect(writer.db.get(["outbox", `m${i}`])).toBeUndefined();
      await Bun.sleep(2);
    }
  }
  expect(await until(() => other.db.get(["history", "h19"]) !== undefined)).toBe(true);
  for (let i = 0; i < 20; i++) {
    expect(other.db.get(["outbox", `m${i}`])).toBeUndefined();
    expect(other.db.get(["state", "w", "production", "r2", `f${i}`])).toEqual({ state: "firing" });
  }
}, 30_000);
