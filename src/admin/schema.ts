// admin schema: bodies of the admin API (contract §2), checked by compiled TypeBox schemas.
import { Type as T, type TSchema } from "@sinclair/typebox";
import { TypeCompiler } from "@sinclair/typebox/compiler";
import { SCOPES } from "../auth/keys.ts";
import { ENVIRONMENTS, KEY_TYPES, RFC3339_PATTERN } from "../schema.ts";
import { badRequest, type FieldError } from "../errors.ts";

const Name = T.String({ minLength: 1, maxLength: 200 });

export const CreateWorkspace = T.Object(
  { name: Name, organization: T.Optional(Name), plan: T.Optional(T.String({ minLength: 1 })) },
  { additionalProperties: false },
);
export const UpdateWorkspace = T.Object(
  { name: T.Optional(Name), plan: T.Optional(T.String({ minLength: 1 })) },
  { additionalProperties: false, minProperties: 1 },
);
export const CreateKey = T.Object(
  {
    name: T.Optional(Name),
    environment: T.Union(ENVIRONMENTS.map((e) => T.Literal(e))),
    type: T.Union(KEY_TYPES.map((k) => T.Literal(k))),
    scopes: T.Optional(T.Array(T.Union(SCOPES.map((s) => T.Literal(s))), { minItems: 1 })),
    expires_at: T.Optional(T.Union([T.String({ pattern: RFC3339_PATTERN }), T.Null()])),
  },
  { additionalProperties: false },
);

/** checkBody returns the body typed when it fits the schema, else throws 400 VALIDATION_FAILED listing every problem. */
export function checkBody<S extends TSchema>(schema: S, body: unknown): import("@sinclair/typebox").Static<S> {
  const compiled = compile(schema);
  if (compiled.Check(body)) return body as import("@sinclair/typebox").Static<S>;
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of compiled.Errors(body)) {
    const field = e.path.split("/").slice(1).join(".");
    if (seen.has(field)) continue;
    seen.add(field);
    errors.push({ field, message: `${field || "body"}: ${e.message}`, log_index: null });
  }
  throw badRequest("VALIDATION_FAILED", `invalid request body: ${errors.map((e) => e.message).join("; ")}`, { errors });
}

const cache = new WeakMap<TSchema, ReturnType<typeof TypeCompiler.Compile>>();
function compile(schema: TSchema) {
  let c = cache.get(schema);
  if (!c) cache.set(schema, (c = TypeCompiler.Compile(schema)));
  return c;
}
