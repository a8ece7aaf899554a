import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SignJWT, generateKeyPair } from 'jose';
import { DIALECTS } from '../helpers/databases.js';
import { ADMIN_PASSWORD } from '../helpers/gateway.js';
import { readFirstChunkThenDestroy, requestHead, sendThenClose } from '../helpers/raw-http.js';
import { MIB, startGatewayUnderFault, type GatewayUnderFault } from './gateway-fixture.js';

/**
 * Fault suite, gateway: clients that go away at every stage that waits or streams, against a real
 * gateway process with telemetry on. After each case the process answers, and its descriptors and
 * memory came back down; the upstream call the client left is ended (its connection closes).
 */
/** Writes a request (head and body) on a fresh connection and keeps it open: the caller decides when the client leaves. */
async function sendAndHold(port: number, head: string, body: string | Buffer = ''): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  await once(socket, 'connect');
  socket.write(head);
  if (body.length > 0) socket.write(body);
  return socket;
}

for (const dialect of DIALECTS) {
  describe(`gateway faults: clients leaving [${dialect}]`, { timeout: 120_000 }, () => {
    let gw: GatewayUnderFault;
    before(async () => {
      gw = await startGatewayUnderFault(dialect);
    });
    after(async () => gw?.close());

    const auth = () => ({ authorization: gw.token });

    for (const method of ['GET', 'PUT', 'POST']) {
      test(`proxied ${method} while the upstream is slow: the upstream call is ended, access line 499`, { timeout: 30_000 }, async () => {
        const baseline = gw.baseline();
        const arrived = once(gw.events, 'arrived:/slow');
        const closed = once(gw.events, 'closed:/slow');
        const body = method === 'GET' ? '' : '{"nama":"x"}';
        const head = requestHead(method, '/api/v1/master-data/slow', {
          ...auth(),
          ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}),
        });
        const client = await sendAndHold(gw.port, head, body);
        await arrived;
        client.destroy();
        await closed; // the gateway ended the upstream call (its timeout here is 30 s)
        const line = () =>
          gw.receiver
            .logRecords()
            .find(
              (r) =>
                r.attributes['url.path'] === '/api/v1/master-data/slow' &&
                r.attributes['http.request.method'] === method &&
                r.attributes['http.response.status_code'] === 499,
            );
        // The request span ended first (the client left); its upstream call, ended after it, is still shipped with it.
        const spansOf = () => gw.receiver.spans().filter((span: any) => span.traceId === line()?.traceId);
        await gw.receiver.waitFor(() => spansOf().length === 2);
        const call = spansOf().find((span: any) => span.kind === 3);
        assert.equal(call.status.code, 2, 'the upstream call the client left is marked failed');
        await gw.stillServes(baseline);
      });
    }

    test('mid-upload: the client sends half of a 16 MiB body and leaves; the upstream call is ended', { timeout: 30_000 }, async () => {
      const baseline = gw.baseline();
      const arrived = once(gw.events, 'arrived:/upload-sink');
      const closed = once(gw.events, 'closed:/upload-sink');
      const head = requestHead('PUT', '/api/v1/file/upload-sink', {
        ...auth(),
        'content-type': 'application/octet-stream',
        'content-length': 16 * MIB,
      });
      const client = await sendAndHold(gw.port, head, Buffer.alloc(8 * MIB, 5));
      await arrived;
      await once(gw.events, 'upload-data'); // part of the body reached the upstream
      client.destroy();
      await closed;
      await gw.stillServes(baseline);
    });

    test(
      'mid-download: the client reads the first part of a 64 MiB answer and leaves; the upstream call is ended',
      { timeout: 30_000 },
      async () => {
        const baseline = gw.baseline();
        const closed = once(gw.events, 'closed:/big');
        const first = await readFirstChunkThenDestroy(gw.port, '/api/v1/file/big', auth());
        assert.equal(first.status, 200);
        await closed;
        await gw.stillServes(baseline);
      },
    );

    test('during login (argon2 running): the client sends the login and closes at once', { timeout: 30_000 }, async () => {
      const baseline = gw.baseline();
      const body = JSON.stringify({ no_pegawai: 'admin', kata_sandi: ADMIN_PASSWORD });
      for (let i = 0; i < 5; i += 1) {
        await sendThenClose(
          gw.port,
          requestHead('POST', '/api/v1/auth/login', { 'content-type': 'application/json', 'content-length': body.length }),
          body,
        );
      }
      // The logins ran to their end for nobody; the account is not locked, and login still works.
      const login = await gw.call('POST', '/api/v1/auth/login', { headers: { 'content-type': 'application/json' }, body });
      assert.equal(login.status, 200, login.body.toString());
      await gw.stillServes(baseline);
    });

    test(
      "during SSO while the provider's keys are being fetched (the JWKS endpoint stalls): the client closes",
      { timeout: 30_000 },
      async () => {
        const baseline = gw.baseline();
        const { privateKey } = await generateKeyPair('RS256');
        const now = Math.floor(Date.now() / 1000);
        const idToken = await new SignJWT({ email: 'a@example.go.id', email_verified: true })
          .setProtectedHeader({ alg: 'RS256', kid: 'stall-kid' })
          .setIssuer(gw.issuer.url)
          .setAudience('web')
          .setSubject('stall-sub')
          .setIssuedAt(now)
          .setExpirationTime(now + 600)
          .sign(privateKey);
        const body = JSON.stringify({ id_token: idToken });
        const fetching = once(gw.issuer.events, 'jwks');
        const head = requestHead('POST', '/auth/login-sso', {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        });
        const client = await sendAndHold(gw.port, head, body);
        await fetching; // the gateway is waiting on the provider
        client.destroy();
        // The wait ends with the gateway's own timeout (5 s); a login after it still gets a clear answer.
        const after = await gw.call('POST', '/auth/login-sso', { headers: { 'content-type': 'application/json' }, body });
        assert.ok([401, 503].includes(after.status), `${after.status} ${after.body.toString()}`);
        assert.equal(JSON.parse(after.body.toString()).status, false);
        await gw.stillServes(baseline);
      },
    );
  });
}
