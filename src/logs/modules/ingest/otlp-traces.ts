import { SPAN_KINDS, STATUS_CODES, type SpanRecord } from '../apm/span-record.js';
import type { Mapping } from './pipeline.js';
import type { AttributeValue } from '../store/log-store.js';
import { isPlainObject, storableText, type PlainObject } from '../../../shared/text/storable-text.js';
import { attributesOf, hexId, list, nanos, storableAttributes } from './otlp-common.js';
import { dict } from '../../../shared/dict.js';

const MAX_EVENTS = 32;
const MAX_NAME = 1024;

/** Enums arrive as numbers (OTLP/JSON, protobuf) or, from lenient senders, as their names. */
function enumOf(value: unknown, names: readonly string[], prefix: string): number | null {
  if (value === undefined || value === null) return 0;
  if (typeof value === 'number') return Number.isInteger(value) && value >= 0 && value < names.length ? value : null;
  if (typeof value === 'string') {
    const index = names.indexOf(value.toLowerCase().replace(prefix, ''));
    return index >= 0 ? index : null;
  }
  return null;
}

const usOf = (ns: bigint): number => Number(ns / 1000n);

const TWO_56 = 2 ** 56;

/**
 * The spans a sampled span stands for, from its trace state: OpenTelemetry's consistent probability
 * sampling writes the rejection threshold it was recorded by as `ot=th:<1-14 hex digits>` (56 bits,
 * trailing zeros implied), and the span stood a (2^56 - th) / 2^56 chance, so it counts as the
 * inverse (https://opentelemetry.io/docs/specs/otel/trace/tracestate-probability-sampling/). Without a
 * valid threshold a span counts once.
 */
export function adjustedCountOf(traceState: unknown): number {
  if (typeof traceState !== 'string' || traceState.length > 512) return 1;
  const ot = traceState
    .split(',')
    .map((member) => member.trim())
    .find((member) => member.startsWith('ot='));
  const th = ot
    ?.slice(3)
    .split(';')
    .find((field) => field.startsWith('th:'))
    ?.slice(3);
  if (th === undefined || !/^[0-9a-f]{1,14}$/.test(th)) return 1;
  // At most 2^56 (a threshold of 14 f's, which a double may round up to 2^56 itself).
  const rest = TWO_56 - parseInt(th.padEnd(14, '0'), 16);
  return rest >= 1 ? TWO_56 / rest : TWO_56;
}

/**
 * OTLP traces (JSON or decoded protobuf) -> spans. `service.name` of the resource is the span's
 * service ('unknown_service' when missing, as the SDKs name it); resource, scope and span attributes
 * are merged (span wins). A span without valid ids or times is rejected and counted, not stored.
 */
export function mapOtlpTraces(request: unknown): Mapping<SpanRecord> {
  const result: Mapping<SpanRecord> = { items: [], rejected: 0, errors: [] };
  if (!isPlainObject(request)) throw new Error('the body must be an ExportTraceServiceRequest object');
  const reject = (reason: string) => {
    result.rejected += 1;
    if (result.errors.length < 5 && !result.errors.includes(reason)) result.errors.push(reason);
  };
  for (const resourceSpans of list(request.resourceSpans)) {
    if (!isPlainObject(resourceSpans)) continue;
    const resource = attributesOf((resourceSpans.resource as PlainObject | undefined)?.attributes);
    const service =
      typeof resource['service.name'] === 'string' && resource['service.name'] !== '' ? resource['service.name'] : 'unknown_service';
    delete resource['service.name'];
    for (const scopeSpans of list(resourceSpans.scopeSpans)) {
      if (!isPlainObject(scopeSpans)) continue;
      const scope = isPlainObject(scopeSpans.scope) ? scopeSpans.scope : {};
      const scopeAttributes = dict<AttributeValue>();
      if (typeof scope.name === 'string' && scope.name !== '') scopeAttributes['otel.scope.name'] = scope.name;
      for (const span of list(scopeSpans.spans)) {
        if (!isPlainObject(span)) {
          reject('a span is not an object');
          continue;
        }
        const traceId = hexId(span.traceId, 16);
        const spanId = hexId(span.spanId, 8);
        const parentSpanId = hexId(span.parentSpanId, 8);
        if (!traceId || !spanId || parentSpanId === null) {
          reject('traceId must be 16 bytes and spanId 8 bytes, not all zero');
          continue;
        }
        const start = nanos(span.startTimeUnixNano);
        const end = nanos(span.endTimeUnixNano);
        if (!start || !end || end < start) {
          reject('startTimeUnixNano and endTimeUnixNano must be nanoseconds, end not before start');
          continue;
        }
        const kind = enumOf(span.kind, SPAN_KINDS, 'span_kind_');
        const status = isPlainObject(span.status) ? span.status : {};
        const statusCode = enumOf(status.code, STATUS_CODES, 'status_code_');
        if (kind === null || statusCode === null) {
          reject('kind or status.code is not a known value');
          continue;
        }
        const attributes = storableAttributes(
          Object.assign(dict<AttributeValue>(), resource, scopeAttributes, attributesOf(span.attributes)),
        );
        const peer = attributes['peer.service'];
        const events = list(span.events)
          .slice(0, MAX_EVENTS)
          .flatMap((event) => {
            if (!isPlainObject(event)) return [];
            const time = nanos(event.timeUnixNano);
            return [
              {
                name: storableText(typeof event.name === 'string' || typeof event.name === 'number' ? String(event.name) : '').slice(
                  0,
                  MAX_NAME,
                ),
                timeUs: time ? usOf(time) : usOf(start),
                attributes: storableAttributes(attributesOf(event.attributes)),
              },
            ];
          });
        const startUs = usOf(start);
        const endUs = usOf(end);
        result.items.push({
          traceId,
          spanId,
          parentSpanId: parentSpanId ?? null,
          service: storableText(service).slice(0, MAX_NAME),
          name: storableText(typeof span.name === 'string' ? span.name : '').slice(0, MAX_NAME),
          kind,
          startUs,
          endUs,
          durationUs: endUs - startUs,
          statusCode,
          statusMessage: typeof status.message === 'string' && status.message !== '' ? storableText(status.message).slice(0, 4096) : null,
          peerService: typeof peer === 'string' && peer !== '' ? peer.slice(0, MAX_NAME) : null,
          attributes,
          events,
          adjustedCount: adjustedCountOf(span.traceState),
        });
      }
    }
  }
  return result;
}
