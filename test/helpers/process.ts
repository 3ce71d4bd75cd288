// A real Sluice server process on 127.0.0.1 and a random port, for tests of starts, signals and crashes.
import { join } from "node:path";
import type { Subprocess } from "bun";

const ROOT = join(import.meta.dir, "..", "..");

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  base: string;
  /** everything the server printed on stdout up to "listening" and the banner after it */
  banner: string;
  /** exit code after the process ends */
  exited: Promise<number>;
}

/** spawnServer starts `bun src/main.ts` on dataDir and resolves once it listens. */
export async function spawnServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const proc = Bun.spawn([process.execPath, "src/main.ts"], {
    cwd: ROOT,
    env: { ...process.env, SLUICE_DATA_DIR: dataDir, SLUICE_HOST: "127.0.0.1", SLUICE_PORT: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const reader = proc.stdout.getReader();
  const decoder = new TextDecoder();
  let out = "";
  const deadline = Date.now() + 15_000;
  while (!/listening on (http:\/\/\S+)/.test(out)) {
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    const { done, value } = await reader.read();
    if (done) throw new Error(`server exited before listening: ${out}${await new Response(proc.stderr).text()}`);
    out += decoder.decode(value);
  }
  await Bun.sleep(50); // the banner is printed in the same write; give a split write time to arrive
  const more = await Promise.race([reader.read(), Bun.sleep(20).then(() => undefined)]);
  if (more && !more.done) out += decoder.decode(more.value);
  reader.releaseLock();
  const base = /listening on (http:\/\/\S+)/.exec(out)![1];
  return { proc, base, banner: out, exited: proc.exited };
}

/** runCli runs `bun src/cli/main.ts ...args` and returns its exit code and output. */
export async function runCli(args: string[], env: Record<string, string> = {}) {
  const proc = Bun.spawn([process.execPath, "src/cli/main.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { code, stdout, stderr };
}
