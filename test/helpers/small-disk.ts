// small-disk: a data directory on a tmpfs of a few MB, beside ballast files a test removes to free space (contract §14).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SmallDisk {
  dataDir: string;
  /** freeBallast removes ballast file n (1 or 2), freeing its megabytes */
  freeBallast(n: 1 | 2): void;
  unmount(): void;
}

/** mountSmallDisk mounts a tmpfs of diskMb and fills ballastMb of it twice over; CI runs as root, so it may mount. */
export function mountSmallDisk(prefix: string, diskMb = 40, ballastMb = 6): SmallDisk {
  const mount = mkdtempSync(join(tmpdir(), prefix));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", `size=${diskMb}m`, "tmpfs", mount]);
  if (mounted.exitCode !== 0) throw new Error(`this test mounts a tmpfs (it runs as root in CI): ${mounted.stderr.toString()}`);
  const dataDir = join(mount, "data");
  mkdirSync(dataDir);
  for (const n of [1, 2]) writeFileSync(join(mount, `ballast-${n}`), new Uint8Array(ballastMb * 2 ** 20).fill(7));
  return {
    dataDir,
    freeBallast: (n) => rmSync(join(mount, `ballast-${n}`)),
    unmount: () => {
      Bun.spawnSync(["umount", "-l", mount]);
      rmSync(mount, { recursive: true, force: true });
    },
  };
}
