// schemas: the vendored OTLP and Loki .proto files, loaded once into protobufjs types. Bun embeds the text
// imports, so the single binary needs no files beside it.
import protobuf from "protobufjs";
import lokiPush from "./proto/loki-push.proto" with { type: "text" };
import otlpCommon from "./proto/otlp-common.proto" with { type: "text" };
import otlpLogs from "./proto/otlp-logs.proto" with { type: "text" };
import otlpResource from "./proto/otlp-resource.proto" with { type: "text" };

const root = new protobuf.Root();
for (const text of [otlpCommon, otlpResource, otlpLogs, lokiPush]) protobuf.parse(text, root, { keepCase: false });
root.resolveAll();

/** OTLP's request and response of POST /v1/logs. */
export const ExportLogsServiceRequest = root.lookupType("opentelemetry.proto.logs.v1.ExportLogsServiceRequest");
export const ExportLogsServiceResponse = root.lookupType("opentelemetry.proto.logs.v1.ExportLogsServiceResponse");
/** Loki's push request. */
export const PushRequest = root.lookupType("logproto.PushRequest");
