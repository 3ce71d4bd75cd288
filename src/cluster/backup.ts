// backup: a new copy of a partition starts from a peer's LMDB backup, which carries the sequence it had applied, and
// consumes the stream from there; a copy without a peer to copy from replays the stream from its start.
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { NatsConnection, Subscription } from "@nats-io/transport-node";
import type { PartitionCopy } from "./copy.ts";
import { askStream, serveStream } from "./relay.ts";

const backupSubject = (p: number) => `sluice.b.${p}`;
/** how long a backup may take to be made before its first bytes are sent */
const MAKE_TIMEOUT_MS = 30_000;

/** serveBackups answers peers' requests for a backup of this copy: an LMDB copy of its environment, streamed. */
export function serveBackups(nc: NatsConnection, copy: PartitionCopy, tmpDir: string): Subscription {
  return serveStream(nc, backupSubject(copy.partition), async () => {
    mkdirSync(tmpDir, { recursive: true });
    const path = join(tmpDir, `backup-p${copy.partition}-${crypto.randomUUID()}.mdb`);
    await copy.sluice.dbs.root.backup(path, false); // a consistent snapshot: the blocks and the applied sequence of one transaction
    const reader = Bun.file(path).stream().getReader();
    const done = () => rmSync(path, { force: true });
    return new Response(
      new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { done: end, value } = await reader.read();
          if (end) {
            done();
            controller.close();
          } else controller.enqueue(value);
        },
        cancel: done,
      }),
    );
  });
}

/** fetchBackup asks a peer holding partition p for a backup and stores it as the data file in `dir`; false if none answered. */
export async function fetchBackup(nc: NatsConnection, p: number, dir: string): Promise<boolean> {
  const response = await askStream(nc, backupSubject(p), { method: "GET", url: "http://backup/", headers: [], body: null, barrier: 0 }, MAKE_TIMEOUT_MS);
  if (!response?.body || response.status !== 200) return false;
  mkdirSync(dir, { recursive: true });
  const part = join(dir, "sluice.mdb.part");
  const writer = Bun.file(part).writer();
  for await (const chunk of response.body) writer.write(chunk);
  await writer.end();
  renameSync(part, join(dir, "sluice.mdb"));
  return true;
}
