// cli admin: the workspaces and keys commands, run against a data directory (also while the server runs).
import { parseArgs } from "node:util";
import type { AdminService } from "../admin/service.ts";
import { composeAdmin } from "../compose.ts";
import type { PlanTable } from "../limits/plans.ts";

type AdminOpName = "createWorkspace" | "listWorkspaces" | "updateWorkspace" | "createKey" | "listKeys" | "rotateKey" | "revokeKey";
/** AdminOps are the operations the commands use: the AdminService on a data directory, or a node's admin API (admin-remote.ts). */
export type AdminOps = { [K in AdminOpName]: (...args: Parameters<AdminService[K]>) => unknown };

export interface CommandSpec {
  usage: string;
  summary: string;
  options: Record<string, { type: "string"; description: string; required?: boolean }>;
  positionals: string[];
  run(admin: AdminOps, values: Record<string, string | undefined>, positionals: string[]): unknown;
}

export const ADMIN_COMMANDS: Record<string, CommandSpec> = {
  "workspaces create": {
    usage: "sluice workspaces create --name N [--organization O] [--plan P]",
    summary: "create a workspace (plan default: unlimited; organization default: Default)",
    options: {
      name: { type: "string", description: "workspace name", required: true },
      organization: { type: "string", description: "organization name; created when new" },
      plan: { type: "string", description: "free, developer, professional or unlimited" },
    },
    positionals: [],
    run: (a, v) => a.createWorkspace(defined({ name: v.name, organization: v.organization, plan: v.plan })),
  },
  "workspaces list": {
    usage: "sluice workspaces list",
    summary: "list every workspace",
    options: {},
    positionals: [],
    run: async (a) => a.listWorkspaces(),
  },
  "workspaces set-plan": {
    usage: "sluice workspaces set-plan WORKSPACE_ID PLAN",
    summary: "change a workspace's plan; the server applies it on the next request",
    options: {},
    positionals: ["WORKSPACE_ID", "PLAN"],
    run: (a, _v, [id, plan]) => a.updateWorkspace(id, { plan }),
  },
  "keys create": {
    usage: "sluice keys create --workspace ID --environment E --type T [--name N] [--scopes a,b] [--expires-at T]",
    summary: "create an API key; its secret is printed only now",
    options: {
      workspace: { type: "string", description: "workspace id", required: true },
      environment: { type: "string", description: "development, staging or production", required: true },
      type: { type: "string", description: "ro, wo or rw", required: true },
      name: { type: "string", description: "a name to recognise the key by" },
      scopes: { type: "string", description: "comma-separated: logs:read, logs:write, rw, *" },
      "expires-at": { type: "string", description: "RFC 3339 date-time after which the key stops working" },
    },
    positionals: [],
    run: (a, v) =>
      a.createKey(
        v.workspace!,
        defined({
          environment: v.environment,
          type: v.type,
          name: v.name,
          scopes: v.scopes?.split(",").map((s) => s.trim()),
          expires_at: v["expires-at"],
        }),
      ),
  },
  "keys list": {
    usage: "sluice keys list --workspace ID",
    summary: "list a workspace's keys (never their secrets)",
    options: { workspace: { type: "string", description: "workspace id", required: true } },
    positionals: [],
    run: async (a, v) => a.listKeys(v.workspace!),
  },
  "keys rotate": {
    usage: "sluice keys rotate KEY_ID",
    summary: "give a key a new secret (printed only now); the old one stops working",
    options: {},
    positionals: ["KEY_ID"],
    run: (a, _v, [id]) => a.rotateKey(id),
  },
  "keys revoke": {
    usage: "sluice keys revoke KEY_ID",
    summary: "revoke a key; it answers 401 from then on",
    options: {},
    positionals: ["KEY_ID"],
    run: async (a, _v, [id]) => {
      await a.revokeKey(id);
      return undefined;
    },
  },
};

/** runAdminCommand parses a command's arguments, runs it on the data directory with the configured plans and returns its JSON. */
export async function runAdminCommand(spec: CommandSpec, args: string[], dataDir: string, plans: PlanTable, remote?: AdminOps): Promise<unknown> {
  const { values, positionals } = parseArgs({
    args,
    options: Object.fromEntries(Object.entries(spec.options).map(([k, o]) => [k, { type: o.type }])),
    allowPositionals: true,
    strict: true,
  });
  const missing = Object.entries(spec.options)
    .filter(([k, o]) => o.required && values[k] === undefined)
    .map(([k]) => `--${k}`);
  if (missing.length || positionals.length !== spec.positionals.length) {
    throw new UsageError(`${missing.length ? `missing ${missing.join(", ")}; ` : ""}usage: ${spec.usage}`);
  }
  if (remote) return await spec.run(remote, values as Record<string, string>, positionals);
  const { admin, close } = composeAdmin(dataDir, plans);
  try {
    return await spec.run(admin, values as Record<string, string>, positionals);
  } finally {
    await close();
  }
}

/** UsageError is a mistake in the command line; the CLI exits 2 with the usage line. */
export class UsageError extends Error {}

const defined = (o: Record<string, unknown>) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
