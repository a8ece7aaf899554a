import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_NO_PEGAWAI, ADMIN_PASSWORD, startTestGateway, type TestGateway } from '../helpers/gateway.js';
import { DIALECTS } from '../helpers/databases.js';

for (const dialect of DIALECTS) {
  describe(`auth [${dialect}]`, () => {
    let gw: TestGateway;
    before(async () => {
      gw = await startTestGateway(dialect);
    });
    after(async () => gw.close());

    test('login returns a wrapped token and the user', async () => {
      const response = await gw.request({ method: 'POST', url: '/api/v1/auth/login', payload: { no_pegawai: ADMIN_NO_PEGAWAI, kata_sandi: ADMIN_PASSWORD } });
      assert.equal(response.statusCode, 200);
      const body = response.json();
      assert.equal(body.code, 200);
      assert.equal(body.status, true);
      assert.match(body.data.token, /^[A-Za-z0-9]{3}eyJ[\w-]+\.[\w-]+\.[\w-]+[A-Za-z0-9]{5}$/);
      assert.deepEqual(Object.keys(body.data.user).sort(), ['email', 'hak_akses_id', 'id', 'nama', 'no_pegawai', 'tipe_pegawai']);
    });
  });
}
