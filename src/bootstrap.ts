// bootstrap: the first start on an empty data directory creates a workspace, a key and the admin token (contract §1).
import type { AdminService } from "./admin/service.ts";
import { hashSecret, randomText } from "./auth/keys.ts";
import type { MetaStore } from "./storage/records/meta.ts";

export interface FirstStart {
  workspaceId?: string;
  apiKey?: string;
  adminToken?: string;
}

/** bootstrap creates what a fresh data directory lacks and returns the secrets to print once. */
export async function bootstrap(meta: MetaStore, admin: AdminService, envAdminToken: string | undefined, firstWorkspace = true): Promise<FirstStart> {
  const made: FirstStart = {};
  if (envAdminToken === undefined && meta.adminTokenHash() === undefined) {
    made.adminToken = `sla_${randomText(40)}`;
    await meta.setAdminTokenHash(hashSecret(made.adminToken));
  }
  if (firstWorkspace && meta.workspaces().length === 0) {
    const ws = await admin.createWorkspace({ name: "default", plan: "unlimited" });
    const key = await admin.createKey(ws.id, { name: "default", environment: "development", type: "rw" });
    made.workspaceId = ws.id;
    made.apiKey = key.key;
  }
  return made;
}

/** banner is what the first start prints: the secrets once, and a curl line that works as is. */
export function banner(made: FirstStart, baseUrl: string): string {
  const lines: string[] = [];
  if (made.apiKey) {
    lines.push(
      `First start: created workspace "default" (plan unlimited, id ${made.workspaceId}) with a development read-write key.`,
      `  API key (shown only now):      ${made.apiKey}`,
    );
  }
  if (made.adminToken) lines.push(`  Admin token (shown only now):  ${made.adminToken}`);
  if (made.apiKey) {
    lines.push(
      "Send a log:",
      `  curl -X POST ${baseUrl}/api/v1/workspace/logs -H 'X-API-Key: ${made.apiKey}' -H 'Content-Type: application/json' \\`,
      `    -d '{"action":"user.login","level":"info","message":"hello from curl","clientTimestamp":"${new Date().toISOString()}"}'`,
      "Read it back:",
      `  curl ${baseUrl}/api/v1/workspace/logs -H 'X-API-Key: ${made.apiKey}'`,
    );
  }
  return lines.join("\n");
}
