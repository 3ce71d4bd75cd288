// unsupported: the 400 for a LogQL construct that Sluice does not evaluate (contract §17).
import { badRequest } from "../errors.ts";

/** unsupported is the 400 naming a construct Sluice does not evaluate. */
export const unsupported = (what: string) =>
  badRequest("VALIDATION_QUERY_INVALID", `LogQL ${what} is not supported by Sluice; rewrite the query without it (contract §17 lists what is)`);
