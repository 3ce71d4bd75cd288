// authenticate: API key → caller (401s), then permission and environment checks (403s), contract §3.
import { forbidden, unauthorized } from "../errors.ts";
import type { Plan, PlanTable } from "../limits/plans.ts";
import type { Environment } from "../schema.ts";
import type { KeyRecord, MetaStore, WorkspaceRecord } from "../storage/records/meta.ts";
import { formatMs } from "../time.ts";
import { grants, hashSecret, looksLikeKey, type Permission } from "./keys.ts";

/** Caller is who a workspace request acts as: a key, its workspace and that workspace's plan. */
export interface Caller {
  key: KeyRecord;
  workspace: WorkspaceRecord;
  plan: Plan;
}

const TOUCH_EVERY_MS = 60_000; // last_used_at is minute-accurate; writing it per request would cost a commit each
const RESOLVED_MAX = 10_000; // keys kept resolved at most; past that, a key is read from LMDB each time

/**
 * Authenticator resolves the key of a request. What a key hash resolved to is kept only while the meta
 * generation is unchanged, and that is read again every event-loop turn, so revocations act at once, from any process.
 */
export class Authenticator {
  private readonly touched = new Map<string, number>();
  private readonly resolved = new Map<string, { key: KeyRecord; workspace: WorkspaceRecord }>();
  private generation = -1;
  constructor(
    private readonly meta: MetaStore,
    private readonly plans: PlanTable,
  ) {}

  authenticate(headers: Headers, nowMs = Date.now()): Caller {
    const secret = presentedKey(headers);
    if (secret === undefined) {
      throw unauthorized(
        "AUTH_MISSING_API_KEY",
        "no API key: send it as the X-API-Key header, as Authorization: ApiKey <key> or Bearer <key>, or as the password of Basic authentication",
      );
    }
    return this.authenticateHash(looksLikeKey(secret) ? hashSecret(secret) : undefined, nowMs);
  }

  /** presents tells whether a request carries a key at all (the key wins over a session cookie). */
  presents(headers: Headers): boolean {
    return presentedKey(headers) !== undefined;
  }

  /** authenticateHash is authenticate for a key known by its hash (a web explorer session); undefined: a malformed key. */
  authenticateHash(hash: string | undefined, nowMs = Date.now()): Caller {
    const found = hash === undefined ? undefined : this.resolve(hash);
    if (!found) {
      throw unauthorized("AUTH_INVALID_API_KEY", "the API key is not valid: it is malformed, unknown or revoked; check it or ask an admin for a new one");
    }
    const { key, workspace } = found;
    if (key.expires_at && Date.parse(key.expires_at) <= nowMs) {
      throw unauthorized("AUTH_API_KEY_EXPIRED", `the API key expired at ${key.expires_at}; ask an admin to rotate it or create a new one`);
    }
    if ((this.touched.get(key.id) ?? 0) + TOUCH_EVERY_MS <= nowMs) {
      this.touched.set(key.id, nowMs);
      this.meta.touchKey(key.id, formatMs(nowMs));
    }
    return { key, workspace, plan: this.plans.get(workspace.plan) };
  }

  // a valid, unrevoked key and its workspace; unknown keys are not kept (they would let anyone fill memory)
  private resolve(hash: string): { key: KeyRecord; workspace: WorkspaceRecord } | undefined {
    const generation = this.meta.currentGeneration();
    if (generation !== this.generation) {
      this.resolved.clear();
      this.generation = generation;
    }
    let found = this.resolved.get(hash);
    if (found) return found;
    const key = this.meta.keyByHash(hash);
    const workspace = key && !key.revoked_at ? this.meta.workspace(key.workspace_id) : undefined;
    if (!key || !workspace) return undefined;
    found = { key, workspace };
    if (this.resolved.size < RESOLVED_MAX) this.resolved.set(hash, found);
    return found;
  }
}

function presentedKey(headers: Headers): string | undefined {
  const direct = headers.get("x-api-key");
  if (direct !== null && direct.trim() !== "") return direct.trim();
  const auth = headers.get("authorization");
  const m = auth && /^(ApiKey|Bearer|Basic)\s+(\S+)\s*$/i.exec(auth);
  if (!m) return undefined;
  return m[1].toLowerCase() === "basic" ? basicPassword(m[2]) : m[2];
}

/** basicPassword is the password of Basic credentials (the key; the user name is ignored), or "" when malformed. */
function basicPassword(encoded: string): string {
  const decoded = Buffer.from(encoded, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon < 0 ? "" : decoded.slice(colon + 1);
}

/** requirePermission throws 403 forbidden unless the caller's scopes grant p. */
export function requirePermission(c: Caller, p: Permission): void {
  if (!grants(c.key.scopes, p)) {
    throw forbidden("forbidden", `this key's scopes (${c.key.scopes.join(", ")}) do not include ${p}; use a key that has it`);
  }
}

/** requireEnvironment throws 403 environment_mismatch when env is not the caller's own environment. */
export function requireEnvironment(c: Caller, env: Environment): void {
  requireKeyEnvironment(c.key.environment, env);
}

/** requireKeyEnvironment is requireEnvironment for a key's environment alone (the ingest worker has no caller). */
export function requireKeyEnvironment(keyEnvironment: Environment, env: Environment): void {
  if (env !== keyEnvironment) {
    throw forbidden("environment_mismatch", `this key is bound to ${keyEnvironment} and cannot use ${env}; use a ${env} key`);
  }
}
