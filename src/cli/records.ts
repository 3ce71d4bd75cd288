// records: reads a file of entries — NDJSON, or one JSON array — as a stream of values, without loading it whole.

/** ReadRecord is one value of the file, or why it could not be read, with where it stood. */
export type ReadRecord = { at: number; value: unknown } | { at: number; error: string };

/** readRecords yields the file's values; `at` is the 1-based line (NDJSON) or the 0-based array index. */
export async function* readRecords(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<ReadRecord> {
  const decoder = new TextDecoder();
  let text = "";
  let mode: "unknown" | "ndjson" | "array" = "unknown";
  const splitter = new ArraySplitter();
  let line = 0;
  const parse = (at: number, raw: string): ReadRecord => {
    try {
      return { at, value: JSON.parse(raw) };
    } catch (e) {
      return { at, error: `not JSON (${(e as Error).message})` };
    }
  };
  for await (const chunk of chunks) {
    text += decoder.decode(chunk, { stream: true });
    if (mode === "unknown") {
      const first = text.trimStart()[0];
      if (first === undefined) continue;
      mode = first === "[" ? "array" : "ndjson";
    }
    if (mode === "array") {
      for (const [at, raw] of splitter.feed(text)) yield parse(at, raw);
      text = "";
      continue;
    }
    let nl: number;
    while ((nl = text.indexOf("\n")) >= 0) {
      const raw = text.slice(0, nl);
      text = text.slice(nl + 1);
      line++;
      if (raw.trim() !== "") yield parse(line, raw);
    }
  }
  text += decoder.decode();
  if (mode === "ndjson" && text.trim() !== "") yield parse(line + 1, text);
  if (mode === "array") {
    for (const [at, raw] of splitter.feed(text)) yield parse(at, raw);
    if (!splitter.closed) yield { at: splitter.index, error: "the JSON array is not closed with ]" };
  }
}

/** ArraySplitter cuts the text of a top-level JSON array into the texts of its elements, chunk by chunk. */
class ArraySplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private element = "";
  index = 0;
  closed = false;

  *feed(text: string): Generator<[number, string]> {
    for (const ch of text) {
      if (this.closed) return;
      if (this.inString) {
        this.element += ch;
        if (this.escaped) this.escaped = false;
        else if (ch === "\\") this.escaped = true;
        else if (ch === '"') this.inString = false;
        continue;
      }
      if (this.depth === 0) {
        if (ch === "[") this.depth = 1;
        continue;
      }
      if (this.depth === 1 && (ch === "," || ch === "]")) {
        if (this.element.trim() !== "") yield [this.index++, this.element];
        this.element = "";
        if (ch === "]") this.closed = true;
        continue;
      }
      if (ch === '"') this.inString = true;
      else if (ch === "[" || ch === "{") this.depth++;
      else if (ch === "]" || ch === "}") this.depth--;
      this.element += ch;
    }
  }
}
