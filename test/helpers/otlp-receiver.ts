import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedExport {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

/**
 * A loopback HTTP server that records OTLP/JSON exports as they arrive, for tests of shippers.
 * `hold` keeps requests open without answering (a hung receiver).
 */
export class OtlpReceiver extends EventEmitter {
  readonly received: ReceivedExport[] = [];
  hold = false;
  private readonly held: import('node:http').ServerResponse[] = [];
  private server!: Server;

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const record = { path: req.url ?? '', headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString() || '{}') };
        this.received.push(record);
        this.emit('export', record);
        if (this.hold) {
          this.held.push(res);
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
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
            sl.logRecords.map((lr: any) => ({
              body: lr.body?.stringValue as string,
              severity: lr.severityText as string,
              traceId: lr.traceId as string | undefined,
              service: rl.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue as string,
              attributes: Object.fromEntries(lr.attributes.map((a: any) => [a.key, Object.values(a.value)[0]])),
            })),
          ),
        ),
      );
  }

  spans() {
    return this.received
      .filter((r) => r.path === '/v1/traces')
      .flatMap((r) => r.body.resourceSpans.flatMap((rs: any) => rs.scopeSpans.flatMap((ss: any) => ss.spans)));
  }

  /** Resolves once `predicate` holds, checking after each export (bounded by the test timeout). */
  async waitFor(predicate: () => boolean): Promise<void> {
    while (!predicate()) await once(this, 'export');
  }

  async stop(): Promise<void> {
    for (const res of this.held) res.destroy();
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}
