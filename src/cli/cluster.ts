// cluster commands: `sluice cluster init|status|rebalance` against the NATS cluster (--cluster or SLUICE_CLUSTER).
import { parseArgs } from "node:util";
import { banner } from "../bootstrap.ts";
import { initCluster, rebalance } from "../cluster/ops.ts";
import { clusterStatus } from "../cluster/status.ts";
import type { PlanTable } from "../limits/plans.ts";
import { UsageError } from "./admin.ts";

export const CLUSTER_USAGE = [
  "sluice cluster init --partitions N [--replicas R] [--copies C] [--cluster URLS]",
  "sluice cluster status [--cluster URLS] [--monitor URLS]  (exit 1 when a partition has no caught-up copy or replicas or copies disagree;\n" +
    "         --monitor or SLUICE_NATS_MONITOR: every NATS server's monitoring URL, e.g. http://a:8222, to audit each one's streams)",
  "sluice cluster rebalance [--cluster URLS]  (assign partition copies to the live storage nodes)",
].join("\n       ");

const whole = (v: string | undefined, name: string, fallback: number, min: number, max: number) => {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name} must be a whole number from ${min} to ${max}`);
  return n;
};

/** clusterCommand runs one cluster command, printing JSON; returns the exit code. */
export async function clusterCommand(args: string[], env: Record<string, string | undefined>, plans: PlanTable): Promise<number> {
  const [command, ...rest] = args;
  const { values } = parseArgs({
    args: rest,
    options: {
      cluster: { type: "string" },
      monitor: { type: "string" },
      partitions: { type: "string" },
      replicas: { type: "string" },
      copies: { type: "string" },
    },
    strict: true,
  });
  const list = (text: string | undefined) =>
    (text ?? "")
      .split(",")
      .map((u) => u.trim())
      .filter(Boolean);
  const urls = list(values.cluster ?? env.SLUICE_CLUSTER);
  if (urls.length === 0) throw new UsageError(`give the NATS URLs with --cluster or SLUICE_CLUSTER; usage: ${CLUSTER_USAGE}`);
  if (command === "init") {
    const settings = {
      partitions: whole(values.partitions, "partitions", 16, 1, 1024),
      replicas: whole(values.replicas, "replicas", 3, 1, 5),
      copies: whole(values.copies, "copies", 2, 1, 16),
    };
    const made = await initCluster(urls, settings, plans, env.SLUICE_ADMIN_TOKEN || undefined);
    console.log(JSON.stringify({ initialised: settings }));
    const text = banner(made, "http://<any node>:8080");
    if (text) console.log(text);
    return 0;
  }
  if (command === "status") {
    const status = await clusterStatus(urls, { monitors: list(values.monitor ?? env.SLUICE_NATS_MONITOR) });
    console.log(JSON.stringify(status, null, 2));
    for (const line of status.problems) console.error(line);
    return status.ok ? 0 : 1;
  }
  if (command === "rebalance") {
    console.log(JSON.stringify(await rebalance(urls), null, 2));
    return 0;
  }
  throw new UsageError(`usage: ${CLUSTER_USAGE}`);
}
