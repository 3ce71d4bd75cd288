// Entries that look like a real service's logs, for the explorer's tests, screenshots and bench.

const ACTIONS = ["http.request", "checkout.payment", "user.login", "db.query", "cache.miss", "email.send", "job.run"];
const ROUTES = ["/api/orders", "/api/cart", "/api/login", "/api/search", "/healthz"];
const MESSAGES: Record<string, string[]> = {
  fatal: ["out of memory: worker killed", "database unreachable after 5 retries"],
  error: ["payment declined by gateway: card expired", "timeout after 30000 ms calling inventory", "upstream 502 from billing"],
  warn: ["slow query took 1840 ms", "retrying request (attempt 2 of 3)", "cache nearly full: 92%"],
  info: ["request served", "user signed in", "order placed", "email queued for delivery", "job finished"],
  debug: ["cache lookup", "opening connection to replica", "parsed 14 headers"],
  trace: ["enter handler", "leave handler"],
};

/** sampleEntry is the i-th of a deterministic series: mostly info, some warnings and errors, a few fatal. */
export function sampleEntry(i: number): Record<string, unknown> {
  const r = (i * 2654435761) % 1000;
  const level = r < 4 ? "fatal" : r < 60 ? "error" : r < 160 ? "warn" : r < 760 ? "info" : r < 930 ? "debug" : "trace";
  const action = ACTIONS[(i * 3 + (i >> 3)) % ACTIONS.length];
  const messages = MESSAGES[level];
  const status = level === "error" || level === "fatal" ? [500, 502, 503][i % 3] : level === "warn" ? 429 : [200, 201, 204][i % 3];
  return {
    action,
    level,
    message: messages[i % messages.length],
    clientTimestamp: new Date(Date.UTC(2026, 10, 22, 10, 0, 0) + i * 1000).toISOString(),
    tags: i % 5 === 0 ? ["checkout", "eu-west"] : i % 3 === 0 ? ["search"] : [],
    actor: { id: `u${1000 + (i % 37)}`, email: `user${i % 37}@example.com` },
    context: { request_id: `req-${(i * 7919).toString(16)}`, host: `web-${i % 4}` },
    metadata: { http: { method: i % 4 === 0 ? "POST" : "GET", route: ROUTES[i % ROUTES.length], status }, duration_ms: (i * 37) % 2000 },
  };
}

/** storeSample writes n sample entries in batches through the bulk API of a base URL. */
export async function storeSample(base: string, key: string, n: number, start = 0, batch = 1000): Promise<void> {
  for (let done = 0; done < n; done += batch) {
    const size = Math.min(batch, n - done);
    const body = Array.from({ length: size }, (_, j) => sampleEntry(start + done + j));
    const r = await fetch(`${base}/api/v1/workspace/logs/bulk`, {
      method: "POST",
      headers: { "x-api-key": key, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    if (r.status !== 201) throw new Error(`bulk store failed: ${r.status} ${await r.text()}`);
  }
}
