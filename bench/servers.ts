// servers: how the benches start what they measure, each with the runtime settings Sluice runs with: their own
// bare servers (ceilings and floors, each printing "listening on URL" first) and Sluice with its first key.
import type { Subprocess } from "bun";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { RUNTIME_ENV } from "../src/runtime.ts";
import { spawnServer, type ServerProcess } from "../test/helpers/process.ts";

export interface BareServer {
  proc: Subprocess<"ignore", "pipe", "inherit">;
  url: string;
}

/** startBare runs one of bench/'s own servers (a file beside this one) and reads its address. */
export async function startBare(file: string, env: Record<string, string> = {}): Promise<BareServer> {
  const proc = Bun.spawn([process.execPath, join(import.meta.dir, file)], { stdout: "pipe", env: { ...process.env, ...RUNTIME_ENV, ...env } });
  const reader = proc.stdout.getReader();
  const { value } = await reader.read();
  reader.releaseLock();
  const url = /listening on (\S+)/.exec(new TextDecoder().decode(value))?.[1];
  if (!url) throw new Error(`bench/${file} did not say where it listens`);
  return { proc, url };
}

export interface SluiceServer extends ServerProcess {
  /** the API key the first start printed */
  key: string;
}

/** startSluice starts Sluice on a fresh data directory and reads the key its first start prints. */
export async function startSluice(dataDir: string, env: Record<string, string>): Promise<SluiceServer> {
  const server = await spawnServer(dataDir, env);
  return { ...server, key: /API key \(shown only now\):\s+(\S+)/.exec(server.banner)![1] };
}

/** median of values: the middle one, or the mean of the middle two. */
export function median(values: number[]): number {
  const v = [...values].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
}

/** quiet waits (at most 60 s) until a process uses under 5% of a core over half a second, and returns the ms waited. */
export async function quiet(pid: number): Promise<number> {
  const ticks = () => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return Number(f[11]) + Number(f[12]); // utime + stime, in 10 ms ticks
  };
  const t0 = performance.now();
  let last = ticks();
  while (performance.now() - t0 < 60_000) {
    await Bun.sleep(500);
    const now = ticks();
    if (now - last <= 2) break;
    last = now;
  }
  return performance.now() - t0;
}
