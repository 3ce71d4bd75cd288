// openapi: OpenAPI operation details built from the same TypeBox schemas that check requests.
import type { TObject, TSchema } from "@sinclair/typebox";
import type { OpenAPIV3 } from "openapi-types";
import { ErrorResponse } from "../schema.ts";

interface Operation {
  summary: string;
  description?: string;
  permission: string;
  body?: TSchema;
  query?: TObject;
  responses: Record<number, { description: string; schema?: TSchema; headers?: Record<string, string> }>;
  errors: number[];
}

const ERROR_TEXT: Record<number, string> = {
  400: "invalid request (see error_code)",
  401: "API key missing, invalid, revoked or expired",
  403: "key lacks the permission or the environment",
  404: "not found",
  429: "rate limit or monthly quota exceeded",
  500: "internal error",
};

/** operation builds an Elysia route `detail` that the OpenAPI plugin merges into the document. */
export function operation(op: Operation): OpenAPIV3.OperationObject {
  const responses: Record<string, OpenAPIV3.ResponseObject> = {};
  for (const [status, r] of Object.entries(op.responses)) {
    responses[status] = {
      description: r.description,
      ...(r.schema ? { content: { "application/json": { schema: r.schema as OpenAPIV3.SchemaObject } } } : {}),
      ...(r.headers ? { headers: Object.fromEntries(Object.entries(r.headers).map(([h, d]) => [h, { description: d, schema: { type: "string" } }])) } : {}),
    };
  }
  for (const status of op.errors) {
    responses[status] = { description: ERROR_TEXT[status], content: { "application/json": { schema: ErrorResponse as OpenAPIV3.SchemaObject } } };
  }
  return {
    summary: op.summary,
    description: `${op.description ? `${op.description}\n\n` : ""}Requires the \`${op.permission}\` permission.`,
    tags: ["logs"],
    security: [{ ApiKey: [] }, { ApiKeyAuthorization: [] }] as OpenAPIV3.SecurityRequirementObject[],
    ...(op.body ? { requestBody: { required: true, content: { "application/json": { schema: op.body as OpenAPIV3.SchemaObject } } } } : {}),
    ...(op.query
      ? {
          parameters: Object.entries(op.query.properties).map(([name, schema]) => ({
            name,
            in: "query",
            required: false,
            schema: schema as OpenAPIV3.SchemaObject,
            description: (schema as { description?: string }).description,
          })),
        }
      : {}),
    responses,
  };
}

/** openapiConfig is the plugin configuration: the document lives beside the workspace API. */
export const openapiConfig = {
  path: "/docs",
  specPath: "/api/v1/workspace/openapi.json",
  exclude: { paths: [/^\/api\/v1\/admin/, "/healthz", "/livez", "/readyz", "/docs", "/api/v1/workspace/openapi.json"] },
  documentation: {
    info: { title: "Sluice workspace API", version: "1.1.0", description: "Send structured log entries and read them back." },
    components: {
      securitySchemes: {
        ApiKey: { type: "apiKey" as const, in: "header", name: "X-API-Key" },
        ApiKeyAuthorization: { type: "apiKey" as const, in: "header", name: "Authorization", description: "ApiKey <key>" },
      },
    },
  },
};
