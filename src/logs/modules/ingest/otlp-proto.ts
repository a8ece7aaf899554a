import protobuf from 'protobufjs';
import { decodeLogsRequest } from './otlp-logs-decode.js';

/**
 * The OTLP protobuf messages for logs (opentelemetry-proto v1: common, resource, logs, collector),
 * written out here because the installed OpenTelemetry packages ship no .proto files. Field numbers
 * and types are those of the upstream definitions; enums are read as int32 (the same wire form).
 * otlp-proto-telemetry.ts adds the trace and metric messages to the same package.
 */
const OTLP_PROTO = `
syntax = "proto3";
package otlp;

message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    KeyValueList kvlist_value = 6;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message KeyValueList { repeated KeyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message InstrumentationScope {
  string name = 1;
  string version = 2;
  repeated KeyValue attributes = 3;
  uint32 dropped_attributes_count = 4;
}
message Resource {
  repeated KeyValue attributes = 1;
  uint32 dropped_attributes_count = 2;
}

message ExportLogsServiceRequest { repeated ResourceLogs resource_logs = 1; }
message ResourceLogs {
  Resource resource = 1;
  repeated ScopeLogs scope_logs = 2;
  string schema_url = 3;
}
message ScopeLogs {
  InstrumentationScope scope = 1;
  repeated LogRecord log_records = 2;
  string schema_url = 3;
}
message LogRecord {
  fixed64 time_unix_nano = 1;
  fixed64 observed_time_unix_nano = 11;
  int32 severity_number = 2;
  string severity_text = 3;
  AnyValue body = 5;
  repeated KeyValue attributes = 6;
  uint32 dropped_attributes_count = 7;
  fixed32 flags = 8;
  bytes trace_id = 9;
  bytes span_id = 10;
  string event_name = 12;
}
message ExportLogsServiceResponse { ExportLogsPartialSuccess partial_success = 1; }
message ExportLogsPartialSuccess {
  int64 rejected_log_records = 1;
  string error_message = 2;
}
`;

/** Shared with otlp-proto-telemetry.ts, which adds the trace and metric messages to the same package. */
export const root = protobuf.parse(OTLP_PROTO, { keepCase: false }).root;

/** What the ingest routes need of one OTLP signal's collector messages; the same for every signal. */
export interface OtlpMessages {
  /** The request message, for the 400 a body that is not one gets. */
  message: string;
  /** The partial-success field that counts what was rejected (the same name in JSON and protobuf). */
  rejectedField: string;
  /**
   * A protobuf request in the same shape as the OTLP/JSON form (lowerCamelCase names, 64-bit
   * integers as decimal strings); bytes (trace and span ids) stay binary. Throws on bad input.
   */
  decode: (body: Uint8Array) => unknown;
  /** The protobuf answer: partial success when something was rejected, else empty. */
  encodeResponse: (rejected: number, errorMessage: string) => Uint8Array;
}

const TO_OBJECT = { longs: String, defaults: false, oneofs: false } as const;

/** The messages of one signal, by their names in the `otlp` package (parsed into `root` first). */
export function otlpMessages(request: string, response: string, rejectedField: string): OtlpMessages {
  const Request = root.lookupType(`otlp.${request}`);
  const Response = root.lookupType(`otlp.${response}`);
  return {
    message: request,
    rejectedField,
    decode: (body) => Request.toObject(Request.decode(body), TO_OBJECT),
    encodeResponse: (rejected, errorMessage) => {
      const payload = rejected > 0 ? { partialSuccess: { [rejectedField]: rejected, errorMessage } } : {};
      return Response.encode(Response.fromObject(payload)).finish();
    },
  };
}

/** Logs read by a reader of their own (otlp-logs-decode.ts): the same shape as protobufjs's decode and toObject. */
export const logsMessages: OtlpMessages = {
  ...otlpMessages('ExportLogsServiceRequest', 'ExportLogsServiceResponse', 'rejectedLogRecords'),
  decode: decodeLogsRequest,
};
