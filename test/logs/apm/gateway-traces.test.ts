import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { eventually } from '../../helpers/eventually.js';
import { startTestGateway, type TestGateway } from '../../helpers/gateway.js';
import { startTestLogs, type TestLogs } from '../../helpers/logs.js';
import { closedPort, startUpstream, type TestUpstream } from '../../helpers/upstream.js';
import { listenOnLoopback } from '../../helpers/listen.js';

/**
 * The gateway's own traces (a SERVER span per request, a CLIENT span with peer.service per upstream
 * call) shipped to a real logs service make the service map gateway -> upstreams, although the
 * upstreams send no spans. Real gateway, real upstream on 127.0.0.1, real logs service.
 */
for (const dialect of DIALECTS) {
  describe(`APM: the gateway's traces in the service map [${dialect}]`, () => {
    let logs: TestLogs;
    let gateway: TestGateway;
    let upstream: TestUpstream;
    before(async () => {
      logs = await startTestLogs(dialect, { LOGS_SELF_METRICS_INTERVAL: '0' });
      const logsPort = await listenOnLoopback(logs.app);
      const shipper = await logs.provisionIngestAccount('gateway-shipper');
      upstream = await startUpstream((_req, res) => void res.writeHead(200, { 'content-type': 'application/json' }).end('[]'));
      gateway = await startTestGateway('sqlite', {
        GATEWAY_TELEMETRY_URL: `http://127.0.0.1:${logsPort}`,
        GATEWAY_TELEMETRY_USERNAME: shipper.username,
        GATEWAY_TELEMETRY_PASSWORD: shipper.password,
        GATEWAY_TELEMETRY_INTERVAL: '20ms',
        GATEWAY_TELEMETRY_SAMPLE_RATIO: '1',
        SERVER_SERVICE_MASTER_DATA: upstream.url,
        SERVER_SERVICE_KEUANGAN: `http://127.0.0.1:${await closedPort()}`,
      });
    });
    after(async () => {
      await gateway.close();
      await upstream.close();
      await logs.close();
    });

    test('proxied requests appear as gateway -> master-data and gateway -> keuangan (failing) edges', async () => {
      const token = await gateway.login();
      for (let i = 0; i < 2; i += 1) {
        assert.equal(
          (await gateway.request({ method: 'GET', url: '/api/v1/master-data/provinsi', headers: { authorization: token } })).statusCode,
          200,
        );
      }
      assert.equal(
        (await gateway.request({ method: 'GET', url: '/api/v1/keuangan/gaji', headers: { authorization: token } })).statusCode,
        502,
      );

      const headers = await logs.admin();
      // The logs service's clock is frozen at its start; the gateway stamps spans with real time.
      const range = `from=${new Date(Date.now() - 3_600_000).toISOString()}&to=${new Date(Date.now() + 3_600_000).toISOString()}`;
      // The gateway ships in the background, at a time of its own.
      const map = await eventually(async () => {
        const response = await logs.request({ method: 'GET', url: `/api/v1/apm/service-map?${range}`, headers });
        assert.equal(response.statusCode, 200, response.body);
        const body = response.json();
        assert.equal(body.edges.length, 2, JSON.stringify(body.edges));
        return body;
      });
      assert.deepEqual(
        map.edges.map((e: { source: string; target: string }) => `${e.source}->${e.target}`),
        ['gerbang-gateway->keuangan', 'gerbang-gateway->master-data'],
      );
      const edge = (target: string) => map.edges.find((e: { target: string }) => e.target === target);
      assert.equal(edge('master-data').requests, 2);
      assert.equal(edge('master-data').errorRate, 0);
      assert.equal(edge('keuangan').requests, 1);
      assert.equal(edge('keuangan').errorRate, 1);
      const gatewayNode = map.nodes.find((n: { name: string }) => n.name === 'gerbang-gateway');
      assert.equal(gatewayNode.instrumented, true);
      assert.ok(gatewayNode.requests >= 3);
      assert.deepEqual(
        map.nodes.filter((n: { instrumented: boolean }) => !n.instrumented).map((n: { name: string }) => n.name),
        ['keuangan', 'master-data'],
      );

      const traces = await logs.request({
        method: 'GET',
        url: `/api/v1/apm/traces?${range}&service=gerbang-gateway&errorsOnly=true`,
        headers,
      });
      assert.equal(traces.statusCode, 200);
      assert.ok(
        traces.json().data.some((t: { services: { service: string }[] }) => t.services.length === 1),
        'the gateway alone sent the failing trace',
      );
    });
  });
}
