// The authenticator keeps what a key resolved to only while no meta write has happened, from this or any other
// MetaStore (the CLI writes from another process): a change acts on the very next request.
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AdminService } from "../../../src/admin/service.ts";
import { Authenticator } from "../../../src/auth/authenticate.ts";
import { PlanTable } from "../../../src/limits/plans.ts";
import { openDatabases } from "../../../src/storage/db.ts";
import { MetaStore } from "../../../src/storage/records/meta.ts";

const dir = mkdtempSync(join(tmpdir(), "sluice-auth-"));
const dbs = openDatabases(dir);
afterAll(async () => {
  await dbs.root.close();
  rmSync(dir, { recursive: true, force: true });
});
const plans = new PlanTable();
const auth = new Authenticator(new MetaStore(dbs.meta), plans);
const other = new AdminService(new MetaStore(dbs.meta), plans); // another writer, as the CLI is
const headers = (key: string) => new Headers({ "x-api-key": key });

test("a key revoked by another writer is refused on the next request, though it was resolved before", async () => {
  const ws = await other.createWorkspace({ name: "revoke" });
  const made = await other.createKey(ws.id, { environment: "production", type: "rw" });
  for (let i = 0; i < 3; i++) expect(auth.authenticate(headers(made.key)).key.id).toBe(made.id);
  await other.revokeKey(made.id);
  expect(() => auth.authenticate(headers(made.key))).toThrow(expect.objectContaining({ code: "AUTH_INVALID_API_KEY" }));
});

test("a workspace's new plan, set by another writer, applies on the next request", async () => {
  const ws = await other.createWorkspace({ name: "replan", plan: "free" });
  const made = await other.createKey(ws.id, { environment: "production", type: "rw" });
  expect(auth.authenticate(headers(made.key)).plan.code).toBe("free");
  await other.updateWorkspace(ws.id, { plan: "professional" });
  expect(auth.authenticate(headers(made.key)).plan.code).toBe("professional");
});

test("a rotated key's old secret is refused on the next request and the new one is accepted", async () => {
  const ws = await other.createWorkspace({ name: "rotate" });
  const made = await other.createKey(ws.id, { environment: "production", type: "rw" });
  expect(auth.authenticate(headers(made.key)).key.id).toBe(made.id);
  const rotated = await other.rotateKey(made.id);
  expect(() => auth.authenticate(headers(made.key))).toThrow(expect.objectContaining({ code: "AUTH_INVALID_API_KEY" }));
  expect(auth.authenticate(headers(rotated.key)).key.id).toBe(made.id);
});

test("one read of the generation serves an event-loop turn: a revocation committed by another process mid-turn applies from the next turn", async () => {
  const ws = await other.createWorkspace({ name: "turn" });
  const made = await other.createKey(ws.id, { environment: "production", type: "rw" });
  await new Promise((r) => setImmediate(r));
  expect(auth.authenticate(headers(made.key)).key.id).toBe(made.id); // this turn's generation is read here
  const hash = (dbs.meta.get(["key", made.id]) as { hash: string }).hash;
  dbs.meta.transactionSync(() => {
    dbs.meta.remove(["hash", hash]);
    dbs.meta.put(["generation"], (dbs.meta.get(["generation"]) as number) + 1);
  });
  expect(auth.authenticate(headers(made.key)).key.id).toBe(made.id); // the same turn: the snapshot it began with
  await new Promise((r) => setImmediate(r));
  expect(() => auth.authenticate(headers(made.key))).toThrow(expect.objectContaining({ code: "AUTH_INVALID_API_KEY" }));
});
