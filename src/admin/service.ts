// admin service: organizations, workspaces and keys (contract §2), shared by the admin API and the CLI.
import { DEFAULT_SCOPES, generateSecret, hashSecret, hintOf } from "../auth/keys.ts";
import { ApiError, badRequest } from "../errors.ts";
import type { PlanTable } from "../limits/plans.ts";
import type { KeyRecord, MetaStore, WorkspaceRecord } from "../storage/records/meta.ts";
import { isUuid } from "../ids.ts";
import { formatMs, parseRfc3339 } from "../time.ts";
import { CreateKey, CreateWorkspace, UpdateWorkspace, checkBody } from "./schema.ts";

export type KeyView = Omit<KeyRecord, "hash" | "workspace_id">;
export type KeyCreated = KeyView & { key: string };

const notFound = (what: string, id: string) =>
  new ApiError(
    404,
    "VALIDATION_INVALID_REQUEST",
    `no ${what} with id ${JSON.stringify(id.length > 64 ? `${id.slice(0, 64)}…` : id)}; list them with GET /api/v1/admin/workspaces`,
  );

/** AdminService performs every admin operation and returns the JSON the admin API answers with. */
export class AdminService {
  constructor(
    private readonly meta: MetaStore,
    private readonly plans: PlanTable,
  ) {}

  async createWorkspace(body: unknown) {
    const b = checkBody(CreateWorkspace, body);
    const plan = this.planCode(b.plan ?? "unlimited");
    const ws = await this.meta.createWorkspace(
      { id: crypto.randomUUID(), name: b.name, plan, created_at: now() },
      b.organization ?? "Default",
      crypto.randomUUID(),
    );
    return this.view(ws);
  }

  listWorkspaces() {
    return this.meta.workspaces().map((w) => this.view(w));
  }

  getWorkspace(id: string) {
    return this.view(this.mustWorkspace(id));
  }

  async updateWorkspace(id: string, body: unknown) {
    const ws = this.mustWorkspace(id);
    const b = checkBody(UpdateWorkspace, body);
    const next: WorkspaceRecord = { ...ws, name: b.name ?? ws.name, plan: b.plan === undefined ? ws.plan : this.planCode(b.plan) };
    await this.meta.updateWorkspace(next);
    return this.view(next);
  }

  async createKey(workspaceId: string, body: unknown): Promise<KeyCreated> {
    this.mustWorkspace(workspaceId);
    const b = checkBody(CreateKey, body);
    let expiresAt: string | null = null;
    if (b.expires_at) {
      const t = parseRfc3339(b.expires_at);
      if (!t)
        throw badRequest("VALIDATION_FAILED", "expires_at is not a real date-time", {
          errors: [{ field: "expires_at", message: "expires_at must be an RFC 3339 date-time with a zone", log_index: null }],
        });
      expiresAt = formatMs(t.ms);
    }
    const secret = generateSecret(b.environment, b.type);
    const key: KeyRecord = {
      id: crypto.randomUUID(),
      workspace_id: workspaceId,
      name: b.name ?? `${b.environment}-${b.type}`,
      environment: b.environment,
      type: b.type,
      scopes: b.scopes ? [...new Set(b.scopes)] : DEFAULT_SCOPES[b.type],
      hash: hashSecret(secret),
      hint: hintOf(secret),
      created_at: now(),
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
    };
    await this.meta.putKey(key);
    return { ...keyView(key), key: secret };
  }

  listKeys(workspaceId: string): KeyView[] {
    this.mustWorkspace(workspaceId);
    return this.meta.keysOf(workspaceId).map(keyView);
  }

  /** rotateKey gives a key a new secret; the old secret stops working at once. */
  async rotateKey(keyId: string): Promise<KeyCreated> {
    const old = this.mustKey(keyId);
    if (old.revoked_at) throw badRequest("VALIDATION_INVALID_REQUEST", `key ${keyId} is revoked; create a new key instead`);
    const secret = generateSecret(old.environment, old.type);
    const key: KeyRecord = { ...old, hash: hashSecret(secret), hint: hintOf(secret) };
    await this.meta.putKey(key, old.hash);
    return { ...keyView(key), key: secret };
  }

  async revokeKey(keyId: string): Promise<void> {
    const key = this.mustKey(keyId);
    if (!key.revoked_at) await this.meta.putKey({ ...key, revoked_at: now() });
  }

  private view(ws: WorkspaceRecord) {
    const org = this.meta.org(ws.org_id);
    const p = this.plans.has(ws.plan) ? this.plans.get(ws.plan) : undefined;
    return {
      id: ws.id,
      name: ws.name,
      organization: { id: ws.org_id, name: org?.name ?? "" },
      plan: {
        code: ws.plan,
        logs_per_month: p?.logs_per_month ?? -1,
        log_retention_days: p?.log_retention_days ?? -1,
        max_batch_size: p?.max_batch_size ?? -1,
        max_log_size: p?.max_log_size ?? -1,
      },
      created_at: ws.created_at,
    };
  }

  private planCode(code: string): string {
    if (this.plans.has(code)) return code;
    throw badRequest("VALIDATION_FAILED", `unknown plan ${JSON.stringify(code)}; use one of ${this.plans.codes().join(", ")}`, {
      errors: [{ field: "plan", message: `plan must be one of ${this.plans.codes().join(", ")}`, log_index: null }],
    });
  }

  private mustWorkspace(id: string): WorkspaceRecord {
    const ws = isUuid(id) ? this.meta.workspace(id) : undefined; // ids are UUIDs; nothing else may reach a key lookup
    if (!ws) throw notFound("workspace", id);
    return ws;
  }

  private mustKey(id: string): KeyRecord {
    const key = isUuid(id) ? this.meta.key(id) : undefined;
    if (!key) throw notFound("key", id);
    return key;
  }
}

function keyView(k: KeyRecord): KeyView {
  const { hash: _hash, workspace_id: _ws, ...view } = k;
  return view;
}

const now = () => formatMs(Date.now());
