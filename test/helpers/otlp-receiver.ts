import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { logsMessages } from '../../src/logs/modules/ingest/otlp-proto.js';
import { tracesMessages } from '../../src/logs/modules/ingest/otlp-proto-telemetry.js';

export interface ReceivedExport {
  path: string;
  headers: IncomingMessage['headers'];
  /** The request body as it came. */
  raw: Buffer;
  /**
   * The export in the OTLP/JSON shape: JSON as sent, or protobuf decoded by the logs service's own
   * decoder (lowerCamelCase names, 64-bit integers as decimal strings), with trace and span ids
   * turned from bytes into hex as OTLP/JSON writes them.
   */
  body: any;
}

const ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);

/** Trace and span ids (bytes in protobuf) as lower-case hex, everywhere in a decoded export. */
function hexIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(hexIds);
  if (value === null || typeof value !== 'object' || value instanceof Uint8Array) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      ID_FIELDS.has(key) && inner instanceof Uint8Array ? Buffer.from(inner).toString('hex') : hexIds(inner),
    ]),
  );
}

function decode(path: string, contentType: string | undefined, raw: Buffer): unknown {
  if (!contentType?.startsWith('application/x-protobuf')) return JSON.parse(raw.toString() || '{}');
  const messages = path === '/v1/logs' ? logsMessages : path === '/v1/traces' ? tracesMessages : undefined;
  if (!messages) throw new Error(`no protobuf decoder for ${path}`);
  return hexIds(messages.decode(raw));
}

/** An attribute's value as a plain JS value (an int64, a decimal string in the decoded form, as a number). */
export function attributeValue(value: any): unknown {
  if (value === undefined || value === null) return undefined;
  if ('intValue' in value) return Number(value.intValue);
  return Object.values(value)[0];
}

/** A KeyValue list as an object. */
export const attributeMap = (list: any[] | undefined): Record<string, any> =>
  Object.fromEntries((list ?? []).map((a: any) => [a.key, attributeValue(a.value)]));

/**
 * A loopback HTTP server that records OTLP exports (OTLP/JSON, or OTLP/protobuf as the gateway
 * sends) as they arrive, for tests of shippers. `hold` keeps requests open without answering (a
 * hung receiver).
 */
export class OtlpReceiver extends EventEmitter {
  readonly received: ReceivedExport[] = [];
  /** Bodies that could not be decoded. */
  readonly errors: string[] = [];
  hold = false;
  private readonly held: import('node:http').ServerResponse[] = [];
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const path = req.url ?? '';
        const protobuf = req.headers['content-type']?.startsWith('application/x-protobuf') === true;
        let body: unknown;
        try {
          body = decode(path, req.headers['content-type'], raw);
        } catch (error) {
          // A body that does not decode fails the test that waits for it, loudly.
          this.errors.push(`${path}: ${(error as Error).message}`);
          res.writeHead(400).end();
          this.emit('export');
          return;
        }
        const record = { path, headers: req.headers, raw, body };
        this.received.push(record);
        this.emit('export', record);
        if (this.hold) {
          this.held.push(res);
          return;
        }
        if (protobuf) res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        else res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** Log records received so far, flattened with their attributes as a plain object. */
  logRecords() {
    return this.received
      .filter((r) => r.path === '/v1/logs')
      .flatMap((r) =>
        r.body.resourceLogs.flatMap((rl: any) =>
          rl.scopeLogs.flatMap((sl: any) =>
            (sl.logRecords ?? []).map((lr: any) => ({
              body: lr.body?.stringValue as string,
              severity: lr.severityText as string,
              severityNumber: lr.severityNumber as number,
              timeUnixNano: lr.timeUnixNano as string,
              observedTimeUnixNano: lr.observedTimeUnixNano as string,
              traceId: lr.traceId as string | undefined,
              spanId: lr.spanId as string | undefined,
              flags: lr.flags as number | undefined,
              service: rl.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue as string,
              scope: sl.scope?.name as string | undefined,
              attributes: attributeMap(lr.attributes),
            })),
          ),
        ),
      );
  }

  spans() {
    return this.received
      .filter((r) => r.path === '/v1/traces')
      .flatMap((r) => r.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans ?? [])));
  }

  /** Resolves once `predicate` holds, checking after each export (bounded by the test timeout). */
  async waitFor(predicate: () => boolean): Promise<void> {
    while (!predicate()) {
      if (this.errors.length > 0) throw new Error(`undecodable export: ${this.errors.join('; ')}`);
      await once(this, 'export');
    }
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
