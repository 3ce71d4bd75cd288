// client: the workspace API as the import and export commands use it (they talk to a running server,
// so that every entry passes the same checks, limits and indexes as any other write).

export interface ClientOptions {
  url: string;
  key: string;
}

/** ApiClient sends workspace calls and retries 429s after their Retry-After. */
/** ApiAnswer is an answer's JSON as the commands read it: each reads the fields its route answers with. */
// biome-ignore lint/suspicious/noExplicitAny: the routes' answers differ, and each command checks what it reads
export type ApiAnswer = any;

export class ApiClient {
  constructor(private readonly o: ClientOptions) {}

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; headers: Headers; json: ApiAnswer }> {
    for (let attempt = 0; ; attempt++) {
      const r = await fetch(`${this.o.url.replace(/\/$/, "")}/api/v1/workspace${path}`, {
        method,
        headers: { "x-api-key": this.o.key, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const json = (await r.json().catch(() => null)) as ApiAnswer;
      if (r.status === 429 && json?.error_code !== "QUOTA_MONTHLY_LOG_LIMIT_EXCEEDED" && attempt < 20) {
        await Bun.sleep(Number(r.headers.get("retry-after") ?? 1) * 1000); // a rate limit: wait it out
        continue;
      }
      return { status: r.status, headers: r.headers, json };
    }
  }
}
