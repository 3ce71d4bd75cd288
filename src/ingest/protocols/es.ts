// es: Elasticsearch bulk bodies (NDJSON action and document lines) → entries, by the mapping of contract §11.
import { badRequest } from "../../errors.ts";
import { parseJson } from "../json.ts";
import { type Item, SAMPLE_CHARS, timestampOf } from "./item.ts";
import { BODY_DEPTH_MAX } from "./json.ts";
import { JsonScan } from "../scan.ts";
import { levelOf } from "./levels.ts";
import { nestDotted } from "./nest.ts";

const utf8 = new TextDecoder("utf-8", { fatal: true });
const STORED_OPS = new Set(["create", "index"]);
const KNOWN_OPS = new Set(["create", "index", "update", "delete"]);
const OBJECT_FIELDS = ["actor", "target", "context"] as const;

/** decodeEs reads a bulk body: an action line, then (except for delete) a document line; a broken action line answers 400. */
export function decodeEs(bytes: Uint8Array, pathIndex: string | undefined, receivedMs: number): Item[] {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw badRequest("VALIDATION_INVALID_JSON", "the bulk body is not valid UTF-8; send NDJSON encoded as UTF-8");
  }
  if (text.trim() === "") {
    throw badRequest("VALIDATION_EMPTY_BODY", "the bulk body is empty; send NDJSON action and document lines");
  }
  const lines = text.split("\n");
  const items: Item[] = [];
  let i = 0;
  const next = (): string | undefined => {
    while (i < lines.length) {
      const l = lines[i++];
      if (l.trim() !== "") return l;
    }
    return undefined;
  };
  for (let actionLine = next(); actionLine !== undefined; actionLine = next()) {
    const at = i;
    const action = parseLine(actionLine, `line ${at} (an action)`);
    const op = typeof action === "object" && action !== null && !Array.isArray(action) ? Object.keys(action)[0] : undefined;
    if (!op || !KNOWN_OPS.has(op)) {
      throw badRequest("VALIDATION_INVALID_REQUEST", `line ${at} is not a bulk action: send {"create":{}} or {"index":{}} before each document`);
    }
    const meta = (action as Record<string, Record<string, unknown> | null>)[op];
    const index = typeof meta?._index === "string" ? meta._index : (pathIndex ?? "");
    if (op === "delete") {
      items.push({
        op,
        index,
        problem: { field: "", message: "delete is not supported: Sluice only appends" },
        sample: () => actionLine.slice(0, SAMPLE_CHARS),
      });
      continue;
    }
    const docLine = next();
    if (docLine === undefined) throw badRequest("VALIDATION_INVALID_REQUEST", `the ${op} action on line ${at} has no document line after it`);
    const sample = () => docLine.slice(0, SAMPLE_CHARS);
    if (!STORED_OPS.has(op)) {
      items.push({ op, index, problem: { field: "", message: `${op} is not supported: use create or index` }, sample });
      continue;
    }
    let doc: unknown;
    try {
      doc = parseLine(docLine, `line ${i} (a document)`);
    } catch (e) {
      items.push({ op, index, problem: { field: "", message: (e as Error).message }, sample });
      continue;
    }
    if (typeof doc !== "object" || doc === null || Array.isArray(doc)) {
      items.push({ op, index, problem: { field: "", message: "a document must be a JSON object" }, sample });
      continue;
    }
    items.push({ op, index, entry: mapDoc(nestDotted(doc as Record<string, unknown>), index, receivedMs), sample });
  }
  return items;
}

function parseLine(line: string, what: string): unknown {
  const bytes = Buffer.from(line);
  if (!new JsonScan(BODY_DEPTH_MAX).feed(bytes)) throw badRequest("VALIDATION_INVALID_JSON", `${what} nests deeper than ${BODY_DEPTH_MAX} levels`);
  try {
    return parseJson(bytes);
  } catch (e) {
    throw badRequest("VALIDATION_INVALID_JSON", `${what} is not JSON: ${(e as Error).message}`);
  }
}

/** mapDoc maps a document (dotted keys already nested): the fields it takes out, the rest to metadata. */
function mapDoc(doc: Record<string, unknown>, index: string, receivedMs: number): Record<string, unknown> {
  const rest: Record<string, unknown> = { ...doc };
  const take = (key: string): unknown => {
    const v = rest[key];
    delete rest[key];
    return v;
  };
  const nested = (a: string, b: string): unknown => {
    const o = doc[a];
    return typeof o === "object" && o !== null ? (o as Record<string, unknown>)[b] : undefined;
  };
  let clientTimestamp: unknown = timestampOf(receivedMs);
  if (doc["@timestamp"] !== undefined) clientTimestamp = timeOf(take("@timestamp"));
  else if (doc.timestamp !== undefined) clientTimestamp = timeOf(take("timestamp"));
  const levelValue = nested("log", "level") ?? doc.level ?? doc.severity;
  const action = [nested("event", "action"), nested("event", "dataset"), index].find((v) => typeof v === "string" && v.trim() !== "") ?? "log";
  const entry: Record<string, unknown> = { action, level: levelOf(levelValue) ?? "info", clientTimestamp };
  if (doc.message !== undefined) {
    const m = take("message");
    entry.message = typeof m === "string" || m === null ? m : JSON.stringify(m);
  }
  if (doc.tags !== undefined) {
    const t = take("tags");
    entry.tags = typeof t === "string" ? [t] : t;
  }
  for (const f of OBJECT_FIELDS) {
    const v = doc[f];
    if (typeof v === "object" && v !== null && !Array.isArray(v)) entry[f] = take(f);
  }
  if (Object.keys(rest).length > 0) entry.metadata = rest;
  return entry;
}

/** timeOf reads a date field: epoch ms as a number, else the text as sent (the entry rules check it). */
function timeOf(v: unknown): unknown {
  if (typeof v === "number") return timestampOf(v);
  return v;
}
