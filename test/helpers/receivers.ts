// Loopback receivers for alert notices: an HTTP server that records each request and answers from a script, and an
// SMTP server (smtp-server from npm) that records each email.
import { SMTPServer } from "smtp-server";

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  /** what the test clock read when it arrived */
  at: number;
}

/** httpReceiver listens on 127.0.0.1; `statuses` are the answers in turn (200 once they run out). */
export function httpReceiver(clock: () => number = Date.now, statuses: number[] = []) {
  const got: Received[] = [];
  const script = [...statuses];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(req) {
      got.push({ path: new URL(req.url).pathname, headers: Object.fromEntries(req.headers), body: await req.text(), at: clock() });
      return new Response("", { status: script.shift() ?? 200 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, got, stop: () => server.stop(true) };
}

export interface Mail {
  from: string;
  to: string[];
  /** the message as received, its quoted-printable soft breaks and "=3D" undone for reading */
  raw: string;
}

/** smtpReceiver is an SMTP server on 127.0.0.1 taking every mail without authentication. */
export async function smtpReceiver() {
  const got: Mail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, session, done) {
      let raw = "";
      stream.on("data", (c: Buffer) => (raw += c.toString()));
      stream.on("end", () => {
        const text = raw.replace(/=\r\n/g, "").replace(/=3D/g, "=");
        got.push({ from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "", to: session.envelope.rcptTo.map((r) => r.address), raw: text });
        done();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.server.address() as { port: number }).port;
  return { port, got, stop: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}
