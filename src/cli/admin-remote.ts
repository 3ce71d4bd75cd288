// admin-remote: the workspaces and keys commands through a node's admin API, for a cluster (contract §13), whose
// workspaces and keys live in NATS, not in a data directory.
import { ApiError, type ErrorCode } from "../errors.ts";
import type { AdminOps } from "./admin.ts";

/** remoteAdmin sends each admin operation to `url` with the admin token; an error answer is thrown as its ApiError. */
export function remoteAdmin(url: string, token: string): AdminOps {
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const r = await fetch(`${url.replace(/\/$/, "")}/api/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status === 204) return undefined;
    const answer = (await r.json().catch(() => ({}))) as { error_code?: ErrorCode; message?: string; details?: Record<string, unknown> };
    if (r.status >= 400)
      throw new ApiError(r.status, answer.error_code ?? "INTERNAL_SERVER_ERROR", answer.message ?? `the server answered ${r.status}`, answer.details);
    return answer;
  };
  const id = encodeURIComponent;
  return {
    createWorkspace: (input) => call("POST", "/workspaces", input),
    listWorkspaces: () => call("GET", "/workspaces"),
    updateWorkspace: (ws, input) => call("PATCH", `/workspaces/${id(ws)}`, input),
    createKey: (ws, input) => call("POST", `/workspaces/${id(ws)}/keys`, input),
    listKeys: (ws) => call("GET", `/workspaces/${id(ws)}/keys`),
    rotateKey: (key) => call("POST", `/keys/${id(key)}/rotate`),
    revokeKey: (key) => call("DELETE", `/keys/${id(key)}`),
  };
}
