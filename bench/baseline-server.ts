// The ceiling: a bare Bun.serve that only parses each JSON body and answers 201.
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  maxRequestBodySize: 1 << 30,
  async fetch(req) {
    const body = (await req.json()) as unknown[];
    return new Response(JSON.stringify({ count: body.length }), { status: 201, headers: { "content-type": "application/json" } });
  },
});
console.log(`listening on http://127.0.0.1:${server.port}`);
export {}; // a module: its names stay its own
