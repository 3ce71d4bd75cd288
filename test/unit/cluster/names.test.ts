// The NATS URLs of SLUICE_CLUSTER as client options: a user and password in a URL are sent, not dropped.
import { expect, test } from "bun:test";
import { natsServers } from "../../../src/cluster/names.ts";

test("a user and password in the URLs become the client's user and pass, and leave the server addresses", () => {
  expect(natsServers(["nats://a1:p%40ss@127.0.0.1:4222", "nats://a1:p%40ss@127.0.0.1:4223"])).toEqual({
    servers: ["nats://127.0.0.1:4222", "nats://127.0.0.1:4223"],
    user: "a1",
    pass: "p@ss",
  });
});

test("URLs without credentials are passed as they are, with no user or pass", () => {
  expect(natsServers(["nats://127.0.0.1:4222", "tls://nats.example:4222"])).toEqual({ servers: ["nats://127.0.0.1:4222", "tls://nats.example:4222"] });
});
