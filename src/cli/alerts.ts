// alerts: `sluice alerts list|create|test-channel`, through a running server's alert routes (contract §16), so that
// rules and channels pass the same checks as any other client's.
import { readFileSync } from "node:fs";
import type { ApiClient } from "./client.ts";
import { UsageError } from "./admin.ts";

export const ALERTS_USAGE = "sluice alerts list [rules|channels|silences|alerts|history] | alerts create FILE | alerts test-channel ID   [--url U] [--key K]";
const LISTS: Record<string, string> = {
  rules: "/alerts/rules",
  channels: "/alerts/channels",
  silences: "/alerts/silences",
  alerts: "/alerts",
  history: "/alerts/history",
};

/** alertsCommand runs one alerts command; it prints each answer as JSON and gives the exit code (1: a call failed). */
export async function alertsCommand(client: ApiClient, args: string[], print: (text: string) => void): Promise<number> {
  const [verb, arg] = args;
  const show = (r: { status: number; json: unknown }) => {
    print(JSON.stringify(r.json, null, 2));
    return r.status >= 400 ? 1 : 0;
  };
  if (verb === "list") {
    const path = LISTS[arg ?? "rules"];
    if (!path) throw new UsageError(`sluice alerts list takes one of ${Object.keys(LISTS).join(", ")}; usage: ${ALERTS_USAGE}`);
    return show(await client.call("GET", path));
  }
  if (verb === "test-channel" && arg) return show(await client.call("POST", `/alerts/channels/${encodeURIComponent(arg)}/test`));
  if (verb === "create" && arg) {
    // a file holds a rule, a channel (it has a "type"), or an array of them: channels are created first, so rules can name them
    const parsed = JSON.parse(readFileSync(arg, "utf8")) as Record<string, unknown> | Record<string, unknown>[];
    const items = Array.isArray(parsed) ? parsed : [parsed];
    const ordered = [...items.filter((i) => "type" in i), ...items.filter((i) => !("type" in i))];
    let code = 0;
    for (const item of ordered) code = Math.max(code, show(await client.call("POST", "type" in item ? "/alerts/channels" : "/alerts/rules", item)));
    return code;
  }
  throw new UsageError(`usage: ${ALERTS_USAGE}`);
}
