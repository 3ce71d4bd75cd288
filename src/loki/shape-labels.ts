// shape-labels: an entry as Loki sees it (labels.ts lokiEntry), read straight off its block's stored shape and scalars
// (storage/format/shaped.ts). Which scalar becomes which label depends on the shape alone, so it is worked out once a
// shape; an entry then costs a label set filled from its scalars, not its objects' JSON built, parsed and walked.
import type { Block } from "../storage/format/block.ts";
import { type Labels, type LokiEntry, labelName, lokiEntry } from "./labels.ts";

/** Plan is what a shape's scalars become: [label, scalar index] pairs in the order lokiEntry sets them. */
interface Plan {
  stream: [string, number][];
  metadata: [string, number][];
  /** the scalars that may give service_name, in the order they are tried: context.service_name, context.service.name */
  service: number[];
}

/** plans worked out already, by shape; null: a shape that is no JSON with its holes filled (read such entries as lokiEntry does) */
const plans = new Map<string, Plan | null>();
const PLANS_KEPT = 4096;

/** holes adds the [label, scalar] pairs of a shape's object whose scalars are their indexes, as flatten (labels.ts) walks it. */
function holes(obj: Record<string, unknown> | null, prefix: string, into: [string, number][]): void {
  if (!obj) return;
  for (const k in obj) {
    if (!Object.hasOwn(obj, k)) continue;
    const v = obj[k];
    const name = prefix === "" ? k : `${prefix}_${k}`;
    if (v === null || Array.isArray(v)) continue;
    if (typeof v === "object") holes(v as Record<string, unknown>, name, into);
    else into.push([labelName(name), v as number]);
  }
}

function planOf(shape: string): Plan | null {
  let objects: unknown;
  try {
    // every scalar of a shape is a hole: each becomes its index
    objects = JSON.parse(shape.split("\u0000").reduce((text, part, k) => `${text}${k - 1}${part}`));
  } catch {
    return null;
  }
  if (!Array.isArray(objects) || objects.length !== 4) return null;
  const [actor, target, context, metadata] = objects as (Record<string, unknown> | null)[];
  const plan: Plan = { stream: [], metadata: [], service: [] };
  holes(context, "", plan.stream);
  holes(actor, "actor", plan.metadata);
  holes(target, "target", plan.metadata);
  holes(metadata, "metadata", plan.metadata);
  if (context && typeof context.service_name === "number") plan.service.push(context.service_name);
  const service = context?.service;
  if (service && typeof service === "object" && !Array.isArray(service)) {
    const name = (service as Record<string, unknown>).name;
    if (typeof name === "number") plan.service.push(name);
  }
  return plan;
}

/** scalarText is a scalar's value as String() writes the parsed JSON value. */
function scalarText(leaf: string): string {
  const c = leaf.charCodeAt(0);
  if (c === 0x22) return leaf.indexOf("\\") < 0 ? leaf.slice(1, -1) : (JSON.parse(leaf) as string);
  if (c === 0x74 || c === 0x66) return leaf; // true, false
  return String(Number(leaf));
}

/** lokiEntryAt is lokiEntry of entry i of `block`, whose message (read already) is `message`. */
export function lokiEntryAt(block: Block, i: number, message: string | null, environment: string): LokiEntry {
  // the line of an entry without a message is its metadata's JSON: that one is parsed
  const scalars = message === null ? undefined : block.objectScalars(i);
  if (scalars === undefined) return lokiEntry(block.detach(i), environment);
  let plan: Plan | null | undefined = null;
  if (scalars !== null) {
    plan = plans.get(scalars.shape);
    if (plan === undefined) {
      if (plans.size >= PLANS_KEPT) plans.clear();
      plans.set(scalars.shape, (plan = planOf(scalars.shape)));
    }
    if (plan === null) return lokiEntry(block.detach(i), environment);
  }
  const id = block.id(i);
  const level = block.level(i);
  const action = block.action(i);
  const stream: Labels = {};
  const metadata: Labels = {};
  let service = action;
  if (plan) {
    const leaves = scalars!.leaves;
    for (const [name, k] of plan.stream) stream[name] = scalarText(leaves[k]);
    for (const [name, k] of plan.metadata) metadata[name] = scalarText(leaves[k]);
    for (const k of plan.service) {
      const c = leaves[k].charCodeAt(0);
      if (c !== 0x74 && c !== 0x66) {
        service = scalarText(leaves[k]); // a string or a number, not true or false
        break;
      }
    }
  }
  stream.environment = environment;
  stream.level = level;
  stream.detected_level = level;
  stream.action = action;
  stream.service_name = service;
  const tags = block.tags(i);
  if (tags.length > 0) metadata.tags = tags.join(",");
  metadata.sluice_id = id;
  return { clientMs: block.clientMs(i), id, stream, metadata, line: message! };
}
