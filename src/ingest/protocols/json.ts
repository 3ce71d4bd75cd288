// json: a protocol's JSON body → value, refusing bodies that nest deeper than any entry may (a bracket bomb stops at
// the scan, before JSON.parse), with the 400s of contract §4.
import { badRequest } from "../../errors.ts";
import { parseJson } from "../json.ts";
import { JsonScan } from "../scan.ts";

/** BODY_DEPTH_MAX bounds a protocol body's nesting: far above what an entry may hold on any plan. */
export const BODY_DEPTH_MAX = 128;

/** parseBoundedJson parses a JSON body of a protocol route. */
export function parseBoundedJson(bytes: Uint8Array, depth = BODY_DEPTH_MAX): unknown {
  if (!new JsonScan(depth).feed(bytes)) throw badRequest("VALIDATION_INVALID_JSON", `the body nests deeper than ${depth} levels; flatten it`);
  return parseJson(bytes);
}
