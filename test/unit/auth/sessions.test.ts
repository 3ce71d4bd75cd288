// The web explorer's sessions (contract §12) are stored in the meta database, hashed: another Sessions on the same
// database (a restarted process, or another cluster node, whose meta database mirrors the same bucket) knows them, a
// use is recorded at most once a minute, and the sweep closes what has ended, what a revoked key opened, strays, and
// a key's sessions past its bound.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SESSION_IDLE_MS, SESSION_MAX_MS, SESSION_RECORD_MS, SESSIONS_PER_KEY, Sessions } from "../../../src/auth/sessions.ts";
import { openDatabases } from "../../../src/storage/db.ts";
import { SessionStore } from "../../../src/storage/records/sessions.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-sessions-"));
const dbs = openDatabases(dir);
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});
const store = new SessionStore(dbs.meta);
const revoked = new Set<string>();
const known = (hash: string) => !revoked.has(hash);
const T0 = Date.parse("2026-11-22T10:00:00Z");
const recordedUses = () => [...dbs.meta.getKeys({ start: ["seen"], end: ["seen", "\uffff"] })].length;

test("a session opened by one Sessions is known to another on the same store, which stores neither the token nor the key", async () => {
  const a = new Sessions(store, known);
  const b = new Sessions(store, known);
  const token = await a.start("keyhash-1", T0);
  expect(b.keyHashOf(token, T0 + 1000)).toBe("keyhash-1");
  const stored = JSON.stringify([...dbs.meta.getRange({ start: ["session"], end: ["session", "\uffff"] })]);
  expect(stored).not.toContain(token);
  await b.end(token);
  expect(a.alive(token, T0 + 2000)).toBe(false);
  expect(() => a.keyHashOf(token, T0 + 2000)).toThrow(expect.objectContaining({ code: "AUTH_INVALID_API_KEY" }));
});

test("a use is recorded in the store at most once a minute by each Sessions, and another Sessions counts idle time from it", async () => {
  const a = new Sessions(store, known);
  const b = new Sessions(store, known);
  const token = await a.start("keyhash-2", T0);
  const before = recordedUses();
  await a.recordUse(token, T0 + 10_000); // within the minute of its start: not recorded again
  await a.recordUse(token, T0 + 30_000);
  expect(recordedUses()).toBe(before);
  await a.recordUse(token, T0 + SESSION_RECORD_MS + 1);
  expect(recordedUses()).toBe(before + 1);
  // b never saw a use: by the recorded one, the session is idle only 2 h after it
  expect(b.alive(token, T0 + SESSION_IDLE_MS + 10_000)).toBe(true);
  expect(b.alive(token, T0 + SESSION_RECORD_MS + 1 + SESSION_IDLE_MS)).toBe(false);
});

test("a session ends after 12 hours however busy, and after 2 hours without a use", async () => {
  const s = new Sessions(store, known);
  const busy = await s.start("keyhash-3", T0);
  for (let t = T0; t < T0 + SESSION_MAX_MS; t += 3_600_000) expect(s.keyHashOf(busy, t)).toBe("keyhash-3");
  expect(s.alive(busy, T0 + SESSION_MAX_MS)).toBe(false);
  const idle = await s.start("keyhash-3", T0);
  expect(s.alive(idle, T0 + SESSION_IDLE_MS - 1)).toBe(true);
  expect(s.alive(idle, T0 + SESSION_IDLE_MS)).toBe(false);
});

test("the sweep closes ended sessions, those of a revoked key and stray uses, and keeps the live ones", async () => {
  const s = new Sessions(store, known);
  await s.sweep(T0 + 100 * SESSION_MAX_MS); // a clean store
  const live = await s.start("keyhash-4", T0);
  const old = await s.start("keyhash-4", T0 - SESSION_MAX_MS);
  const ofRevoked = await s.start("keyhash-revoked", T0);
  revoked.add("keyhash-revoked");
  await store.seen("stray-token-hash", T0);
  await s.sweep(T0 + 1000);
  expect(store.all().map((x) => x.keyHash)).toEqual(["keyhash-4"]);
  expect(store.strays()).toEqual([]);
  expect(s.alive(live, T0 + 1000)).toBe(true);
  expect(s.alive(old, T0 + 1000)).toBe(false);
  expect(s.alive(ofRevoked, T0 + 1000)).toBe(false);
});

test(`past ${SESSIONS_PER_KEY} sessions of one key the sweep closes its oldest`, async () => {
  const s = new Sessions(store, known);
  const tokens: string[] = [];
  for (let i = 0; i < SESSIONS_PER_KEY + 5; i++) tokens.push(await s.start("keyhash-5", T0 + i));
  const other = await s.start("keyhash-6", T0);
  await s.sweep(T0 + 10_000);
  const at = T0 + 10_000;
  expect(tokens.slice(0, 5).map((t) => s.alive(t, at))).toEqual([false, false, false, false, false]);
  expect(tokens.slice(5).every((t) => s.alive(t, at))).toBe(true);
  expect(s.alive(other, at)).toBe(true);
}, 30_000);
