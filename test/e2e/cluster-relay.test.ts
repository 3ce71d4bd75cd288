// The relay of streamed answers between nodes (a live tail, a backup) on a real nats-server: a request published
// before any copy's interest reached the server is sent again, and a copy slow to make its answer is asked once.
import { afterAll, beforeAll, expect, test } from "bun:test";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { pack, unpack } from "../../src/cluster/message.ts";
import { askStream, type RelayedRequest, serveStream } from "../../src/cluster/relay.ts";
import { type NatsCluster, startNatsCluster } from "../helpers/nats.ts";

let nats: NatsCluster;
let asker: NatsConnection;
let copy: NatsConnection;
beforeAll(async () => {
  nats = await startNatsCluster(2);
  asker = await connect({ servers: nats.urls[0] });
  copy = await connect({ servers: nats.urls[1] }); // on another server, as a peer often is
}, 30_000);
afterAll(async () => {
  await asker?.close();
  await copy?.close();
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
