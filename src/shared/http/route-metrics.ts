import type { ServerResponse } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface RouteMetricsOptions {
  registry: Registry;
  /** The service's prefix of series names: `gateway`, `logs`. */
  prefix: string;
  /** Route patterns not measured (the probes, the scrape). */
  unmeasured: ReadonlySet<string>;
}

const MEASURED = Symbol('measured request');

type MeasuredResponse = ServerResponse & { [MEASURED]?: FastifyRequest };

/**
 * Request metrics of a service's own Fastify routes (docs/metrics.md): `<prefix>_http_request_duration_seconds`
 * by route, method and status, and `<prefix>_http_requests_abandoned_total` by route and method. The
 * route label is the route's pattern (`/api/v1/pengguna/:id`), never the raw URL, so no id or query
 * becomes a label; a request no route matched is not measured (its URL is all it has). Methods are
 * the HTTP parser's fixed list, statuses three digits: every label is bounded.
 */
export function measureRoutes(app: FastifyInstance, { registry, prefix, unmeasured }: RouteMetricsOptions): void {
  const duration = new Histogram({
    name: `${prefix}_http_request_duration_seconds`,
    help: 'Time to answer a request, by route pattern, method and status code',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const abandoned = new Counter({
    name: `${prefix}_http_requests_abandoned_total`,
    help: 'Requests whose client closed the connection before the answer (a closed tab, an abandoned upload), by route pattern and method',
    labelNames: ['route', 'method'] as const,
    registers: [registry],
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === undefined || unmeasured.has(route)) return;
    duration.observe({ route, method: request.method, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
  });
  // A client that closes the connection before its answer was written out (a closed tab, a
  // dashboard's refresh, a shipper that gave up) leaves no response, so onResponse never runs: such
  // requests are counted here, and logged as nginx logs its 499 (client closed request). Fastify's
  // onRequestAbort would see only those whose body was still arriving, not a GET or a whole upload.
  function closed(this: MeasuredResponse): void {
    const request = this[MEASURED];
    if (request === undefined || this.writableFinished) return;
    const route = request.routeOptions.url!;
    abandoned.inc({ route, method: request.method });
    request.log.info({ route, method: request.method }, 'request abandoned: the client closed the connection before the answer');
  }
  app.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url;
    if (route !== undefined && !unmeasured.has(route)) {
      const res = reply.raw as MeasuredResponse;
      res[MEASURED] = request;
      // One listener for every request ('close' comes once, with the response as `this`): no closure each.
      res.on('close', closed);
    }
    done();
  });
}

/**
 * `<prefix>_ready`: 1 when the service's own `GET /readyz` answers 200 at scrape time, else 0, so
 * that an alert on readiness needs no probe beside Prometheus and always agrees with the readiness
 * probe, whatever that checks. Across the gateway's workers the lowest value counts.
 */
export function readinessGauge(app: FastifyInstance, registry: Registry, prefix: string): void {
  new Gauge({
    name: `${prefix}_ready`,
    help: '1 when GET /readyz answers 200 (the service can serve), 0 otherwise; read at scrape time',
    registers: [registry],
    aggregator: 'min',
    async collect() {
      const status = await app.inject({ method: 'GET', url: '/readyz' }).then(
        (response) => response.statusCode,
        () => 0,
      );
      this.set(status === 200 ? 1 : 0);
    },
  });
}
