// A real Sluice server process on 127.0.0.1 and a random port, for tests of starts, signals and crashes.
import { join } from "node:path";
import type { Subprocess } from "bun";
import { RUNTIME_ENV } from "../../src/runtime.ts";

const ROOT = join(import.meta.dir, "..", "..");
const SETPRIV = Bun.which("setpriv");

/**
 * diesWithTest makes a spawned program get SIGKILL when the test process ends, however it ends (setpriv's
 * parent-death signal; setpriv then runs the program in its own place, under the same pid): a run cut short leaves
 * no server behind.
 */
export const diesWithTest = (argv: string[]): string[] => (SETPRIV ? [SETPRIV, "--pdeathsig", "KILL", "--", ...argv] : argv);

export interface ServerProcess {
  proc: Subprocess<"ignore", "pipe", "pipe">;
  base: string;
  /** everything the server printed on stdout up to "listening" and the banner after it */
  banner: string;
  /** everything printed on stdout so far (access log lines included); stdout is drained so the server never blocks on it */
  output(): string;
  /** exit code after the process ends */
  exited: Promise<number>;
}

/** spawnServer starts `bun src/main.ts` on dataDir, with the runtime settings npm start gives it, and resolves once it listens. */
export async function spawnServer(dataDir: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const proc = Bun.spawn(diesWithTest([process.execPath, "src/main.ts"]), {
    cwd: ROOT,
    env: { ...process.env, ...RUNTIME_ENV, SLUICE_DATA_DIR: dataDir, SLUICE_HOST: "127.0.0.1", SLUICE_PORT: "0", ...env }, // as npm start runs it
    stdout: "pipe",
    stderr: "pipe",
  });
  // one loop drains stdout for the server's whole life: a full pipe would stall it
  let out = "";
  const decoder = new TextDecoder();
  const listening = /listening on (http:\/\/\S+)/;
  let ended = false;
  void (async () => {
    for await (const chunk of proc.stdout) out += decoder.decode(chunk);
    ended = true;
  })();
  void new Response(proc.stderr).text().then((err) => (out += err));
  const deadline = Date.now() + 15_000;
  while (!listening.test(out)) {
    if (ended) throw new Error(`server exited before listening: ${out}`);
    if (Date.now() > deadline) throw new Error(`server did not start: ${out}`);
    await Bun.sleep(10);
  }
  await Bun.sleep(30); // the banner follows the "listening" line in the same print
  const banner = out;
  const base = listening.exec(banner)![1];
  return { proc, base, banner, output: () => out, exited: proc.exited };
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
