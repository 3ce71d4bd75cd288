// Hostile clients: a client that goes away mid-request is recorded as 499, never as a 5xx or an error line. The access
// log and /metrics are one process's: on a cluster the suite runs this file through one front node.
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawnServer } from "../helpers/process.ts";
import { entry, removeDir, WS } from "../helpers/sluice.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) removeDir(d);
});

describe("clients that go away", () => {
  test("a client that closes mid-body is recorded as 499 in the access log and metrics, never as a 5xx or an error line", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sluice-gone-"));
    dirs.push(dir);
    const server = await spawnServer(dir);
    try {
      const key = /API key[^:]*:\s*(\S+)/.exec(server.banner)![1];
      const { port } = new URL(server.base);
      for (const [path, declared, sent] of [
        ["/logs/bulk", 5_000, '[{"action":"a"'],
        ["/logs", 500, '{"action":'],
        ["/logs/bulk", 200_000, `[${JSON.stringify(entry()).repeat(10)}`],
      ] as const) {
        await new Promise<void>((resolve, reject) => {
          const socket = connect(Number(port), "127.0.0.1", () => {
            socket.write(
              `POST ${WS}${path} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${key}\r\nContent-Type: application/json\r\nContent-Length: ${declared}\r\n\r\n${sent}`,
            );
            setTimeout(() => {
              socket.destroy();
              resolve();
            }, 100);
          });
          socket.on("error", reject);
        });
      }
      const deadline = Date.now() + 5_000;
      while ((server.output().match(/"status":499/g) ?? []).length < 3 && Date.now() < deadline) await Bun.sleep(20);
      const metrics = await (await fetch(`${server.base}/metrics`)).text();
      expect(metrics).toMatch(/sluice_http_requests_total\{route="\/api\/v1\/workspace\/logs\/bulk",method="POST",status="499"\} 2/);
      expect(metrics).not.toMatch(/status="5\d\d"/);
      server.proc.kill("SIGTERM");
      expect(await server.exited).toBe(0);
      await Bun.sleep(50);
      const lines = server
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"));
      expect(lines.filter((l) => l.includes('"status":499')).length).toBe(3);
      expect(lines.filter((l) => l.includes('"level":"error"'))).toEqual([]);
    } finally {
      server.proc.kill(9);
    }
  }, 120_000); // a cluster's start (npm run test:cluster) counts in this time: a minute on a busy machine
});
