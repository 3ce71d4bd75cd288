// The relay of streamed answers between nodes (a live tail, a backup) on a real nats-server: a request published
// before any copy's interest reached the server is sent again, a copy slow to make its answer is asked once, and of
// copies that each took a sending the asker reads one answer and stops the others.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pack, unpack } from "../../src/cluster/message.ts";
import { askStream, type RelayedRequest, serveStream } from "../../src/cluster/relay.ts";
import { type NatsCluster, startNatsCluster } from "../helpers/nats.ts";

let nats: NatsCluster;
let asker: NatsConnection;
let copy: NatsConnection;
let other: NatsConnection;
beforeAll(async () => {
  nats = await startNatsCluster(2);
  asker = await connect({ servers: nats.urls[0] });
  copy = await connect({ servers: nats.urls[1] }); // on another server, as a peer often is
  other = await connect({ servers: nats.urls[1] });
}, 30_000);
afterAll(async () => {
  await asker?.close();
  await copy?.close();
  await other?.close();
  await nats?.stop();
});

const request: RelayedRequest = { method: "GET", url: "http://copy/", headers: [], body: null, barrier: 0 };

test("a streamed request published before any copy listened is sent again until a copy takes it", async () => {
  const asked = askStream(asker, "relay.late", request, 10_000);
  await Bun.sleep(1500); // the first publish reached no subscriber
  const sub = serveStream(copy, "relay.late", async () => new Response("the answer"));
  const response = await asked;
  expect(response?.status).toBe(200);
  expect(await response?.text()).toBe("the answer");
  sub.unsubscribe();
});

test("a copy that took a request and is slow to make its answer is not asked again", async () => {
  let made = 0;
  const sub = serveStream(copy, "relay.slow", async () => {
    made++;
    await Bun.sleep(3000);
    return new Response("made slowly");
  });
  await copy.flush();
  const response = await askStream(asker, "relay.slow", request, 10_000);
  expect(await response?.text()).toBe("made slowly");
  expect(made).toBe(1);
  sub.unsubscribe();
});

test("a request from an asker that does not send again (a node from before) gets the answer's head first, no taken", async () => {
  const sub = serveStream(copy, "relay.old", async () => new Response("for an older node"));
  await copy.flush();
  const inbox = `_INBOX.old.${crypto.randomUUID()}`;
  const frames = asker.subscribe(inbox);
  asker.publish("relay.old", pack({ ...request, inbox } satisfies RelayedRequest));
  const got: string[] = [];
  for await (const m of frames) {
    const frame = unpack<Record<string, unknown>>(m.data);
    got.push(Object.keys(frame)[0]);
    if ("end" in frame) break;
  }
  expect(got).toEqual(["head", "chunk", "end"]);
  sub.unsubscribe();
});

test("of copies that each took a sending of one request, the asker reads one answer whole and stops the others at once", async () => {
  let made = 0;
  const stopped: number[] = [];
  // each answer is 1 MB of its own byte: far past the window a copy sends ahead of what the asker took
  const answer = async () => {
    const n = ++made;
    let left = 64;
    return new Response(
      new ReadableStream<Uint8Array>({
        pull: (controller) => (left-- > 0 ? controller.enqueue(new Uint8Array(16 * 1024).fill(n)) : controller.close()),
        cancel: () => void stopped.push(n),
      }),
    );
  };
  const subs = [serveStream(copy, "relay.twice", answer), serveStream(other, "relay.twice", answer)];
  await (await askStream(asker, "relay.twice", request, 10_000))?.arrayBuffer(); // the copies' interest has reached the asker's server
  made = 0;
  nats.pause(1); // the copies' server holds every sending until it runs again: each is taken, none in time
  const asked = askStream(asker, "relay.twice", request, 20_000);
  await Bun.sleep(2500);
  nats.resume(1);
  const body = new Uint8Array(await (await asked)!.arrayBuffer());
  expect(body.byteLength).toBe(64 * 16 * 1024);
  const read = body[0];
  expect(body.every((b) => b === read)).toBe(true);
  const answered = made; // a sending taken after the answer was read is not the asker's to stop: it stops on its own
  expect(answered).toBeGreaterThanOrEqual(2);
  // told to stop by the asker, well before a copy would stop on its own for not hearing from it (10 s)
  const others = Array.from({ length: answered }, (_, i) => i + 1).filter((n) => n !== read);
  const by = Date.now() + 2000;
  while (!others.every((n) => stopped.includes(n)) && Date.now() < by) await Bun.sleep(50);
  expect(stopped.filter((n) => n <= answered).sort()).toEqual(others);
  for (const sub of subs) sub.unsubscribe();
  const all = Date.now() + 12_000; // nothing left streaming into the next test
  while (stopped.length < made - 1 && Date.now() < all) await Bun.sleep(50);
}, 30_000);

test("a copy whose connection closes before its answer is made (its node stops) raises nothing", async () => {
  const closing = await connect({ servers: nats.urls[1] });
  let made = false;
  serveStream(closing, "relay.closing", async () => {
    await Bun.sleep(300);
    made = true;
    return new Response("too late");
  });
  await closing.flush();
  const asked = askStream(asker, "relay.closing", request, 1000);
  await Bun.sleep(100); // taken by now, the answer still being made
  await closing.close(); // the relay's first publish finds the connection closed
  await Bun.sleep(400);
  expect(made).toBe(true);
  expect(await asked).toBeUndefined(); // no answer came: the asker gave up after its timeout
});
