import protobuf from 'protobufjs';

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
const ExportLogsServiceRequest = root.lookupType('otlp.ExportLogsServiceRequest');
const ExportLogsServiceResponse = root.lookupType('otlp.ExportLogsServiceResponse');

/**
 * Decodes a protobuf request into the same shape as the OTLP/JSON form (lowerCamelCase names,
 * 64-bit integers as decimal strings); bytes (trace and span ids) stay binary. Throws on bad input.
 */
export function decodeLogsRequest(body: Uint8Array): unknown {
  const message = ExportLogsServiceRequest.decode(body);
  return ExportLogsServiceRequest.toObject(message, { longs: String, defaults: false, oneofs: false });
}

export function encodeLogsResponse(rejected: number, errorMessage: string): Uint8Array {
  const payload = rejected > 0 ? { partialSuccess: { rejectedLogRecords: rejected, errorMessage } } : {};
  return ExportLogsServiceResponse.encode(ExportLogsServiceResponse.fromObject(payload)).finish();
}
