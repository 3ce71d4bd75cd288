// Live tail bounds (contract §10): a consumer too slow gets event: overflow, and a key has at most
// SLUICE_TAIL_MAX_PER_KEY open tails.
import { describe, expect, test } from "bun:test";
import { SseReader } from "../helpers/sse.ts";
import { bulk, open, tail, tailSluices, tenant } from "../helpers/tail.ts";

const sluice = tailSluices();

describe("GET /logs/tail", () => {
  test("a consumer too slow gets event: overflow with the cursor of the last entry sent, the stream closes, and resuming from it loses nothing", async () => {
    const s = sluice({ tail: { bufferBytes: 8 * 1024 } });
    const { key } = await tenant(s);
    const r = await tail(s, key);
    // nobody reads meanwhile: 500 KB of events, far past the buffer (and, on a cluster, the relay's window of 64 KB)
    const pad = " ".padEnd(1000, "x");
    for (let i = 0; i < 5; i++)
      await bulk(
        s,
        key,
        Array.from({ length: 100 }, (_, n) => ({ message: `m${i * 100 + n}${pad}` })),
      );
    await Bun.sleep(20);
    const sse = new SseReader(r.body!);
    const got: string[] = [];
    let overflow: string | undefined;
    const name = (data: string) => (JSON.parse(data).message as string).split(" ")[0];
    for (let ev = await sse.next(); ev; ev = await sse.next()) {
      if (ev.event === "overflow") {
        overflow = JSON.parse(ev.data).cursor;
        expect(ev.id).toBe(overflow);
      } else got.push(name(ev.data));
    }
    expect(sse.ended).toBe(true);
    expect(overflow).toBeDefined();
    expect(got.length).toBeLessThan(500);
    const rest = await open(s, key, `after=${encodeURIComponent(overflow!)}`);
    const more = await rest.take(500 - got.length);
    expect([...got, ...more.map((e) => name(e.data))]).toEqual(Array.from({ length: 500 }, (_, n) => `m${n}`));
    await rest.close();
  });

  test("at most SLUICE_TAIL_MAX_PER_KEY tails per key: the next is 429 RATE_LIMIT_PLAN_EXCEEDED; closing one makes room", async () => {
    const s = sluice({ tail: { maxPerKey: 2 } });
    const { ws, key } = await tenant(s);
    const a = await open(s, key);
    const b = await open(s, key);
    const r = await tail(s, key);
    expect([r.status, ((await r.json()) as any).error_code]).toEqual([429, "RATE_LIMIT_PLAN_EXCEEDED"]);
    const other = await open(s, await ws.key("development", "ro")); // another key has its own count
    await a.close();
    await Bun.sleep(10);
    const c = await open(s, key);
    for (const x of [b, c, other]) await x.close();
  });
});
