// The single-entry ceiling: a bare Bun.serve that parses each JSON body and echoes it with 201.
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  async fetch(req) {
    return Response.json(await req.json(), { status: 201 });
  },
});
console.log(`listening on http://127.0.0.1:${server.port}`);
export {}; // a module: its names stay its own
