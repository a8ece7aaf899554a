import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DIALECTS } from '../../helpers/databases.js';
import { newUser, startTestGateway, type TestGateway } from '../../helpers/gateway.js';

const BASE = '/api/v1/pengguna';

for (const dialect of DIALECTS) {
  describe(`user management [${dialect}]`, () => {
    let gw: TestGateway;
    let admin: string;
    before(async () => {
      gw = await startTestGateway(dialect);
      admin = await gw.login();
    });
    after(async () => gw.close());

    const call = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: unknown, authorization = admin) =>
      gw.request({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as object }) });

    test('create gives 201 with id, no_pegawai, nama; get-by-id shows hak_akses and timestamps, never the password', async () => {
      const fields = newUser({ email: 'Mixed.Case@Example.go.id' });
      const created = await call('POST', BASE, fields);
      assert.equal(created.statusCode, 201);
      assert.equal(created.json().code, 201);
      assert.deepEqual(Object.keys(created.json().data).sort(), ['id', 'nama', 'no_pegawai']);
      const { id } = created.json().data;
      const got = await call('GET', `${BASE}/${id}`);
      assert.equal(got.statusCode, 200);
      const data = got.json().data;
      assert.deepEqual(Object.keys(data).sort(), [
        'created_at',
        'email',
        'hak_akses',
        'hak_akses_id',
        'id',
        'nama',
        'no_pegawai',
        'tipe_pegawai',
        'updated_at',
      ]);
      assert.deepEqual(data.hak_akses, { id: 'pegawai', nama: 'Pegawai' });
      assert.equal(data.email, 'mixed.case@example.go.id', 'e-mail stored lower-case');
      assert.ok(!JSON.stringify(got.json()).includes(fields.kata_sandi));
      assert.ok(!Number.isNaN(Date.parse(data.created_at)));
    });

    test('create refuses duplicates and invalid fields with 400, and writes nothing', async () => {
      const { fields } = await gw.createUser();
      const before = (await call('GET', `${BASE}?per_page=1`)).json().info.total;
      const duplicateNo = await call('POST', BASE, newUser({ no_pegawai: fields.no_pegawai }));
      assert.equal(duplicateNo.statusCode, 400);
      assert.match(duplicateNo.json().message, /sudah terdaftar/);
      const duplicateEmail = await call('POST', BASE, newUser({ email: fields.email.toUpperCase() }));
      assert.equal(duplicateEmail.statusCode, 400);
      assert.match(duplicateEmail.json().message, /Email sudah terdaftar/);
      const invalid: [string, unknown][] = [
        ['tipe_pegawai', 'honorer'],
        ['email', 'not-an-email'],
        ['hak_akses_id', 'superuser'],
        ['kata_sandi', 'short'],
        ['nama', 123],
        ['no_pegawai', ''],
      ];
      for (const [field, value] of invalid) {
        const response = await call('POST', BASE, { ...newUser(), [field]: value });
        assert.equal(response.statusCode, 400, field);
        assert.equal(response.json().status, false);
      }
      const { kata_sandi: _omit, ...missingPassword } = newUser();
      assert.equal((await call('POST', BASE, missingPassword)).statusCode, 400);
      assert.equal((await call('GET', `${BASE}?per_page=1`)).json().info.total, before);
    });

    test('get-by-id: unknown id is 404 "not found", a non-UUID is 400', async () => {
      const missing = await call('GET', `${BASE}/00000000-0000-4000-8000-000000000000`);
      assert.equal(missing.statusCode, 404);
      assert.equal(missing.json().status, false);
      assert.match(missing.json().message, /tidak ditemukan/);
      assert.equal((await call('GET', `${BASE}/not-a-uuid`)).statusCode, 400);
      assert.equal((await call('GET', `${BASE}/1' OR '1'='1`)).statusCode, 400);
    });

    test('update changes only name, e-mail and type; password and access right are not mass-assigned', async () => {
      const { id, fields } = await gw.createUser();
      const response = await call('PUT', `${BASE}/${id}`, {
        nama: 'Nama Baru',
        tipe_pegawai: 'pjlp',
        kata_sandi: 'Hack#Passw0rd',
        hak_akses_id: 'admin',
        id: 'x',
      });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(response.json().data, { id, no_pegawai: fields.no_pegawai, nama: 'Nama Baru' });
      const data = (await call('GET', `${BASE}/${id}`)).json().data;
      assert.equal(data.tipe_pegawai, 'pjlp');
      assert.equal(data.hak_akses_id, 'pegawai');
      await gw.login(fields.no_pegawai, fields.kata_sandi);
      await assert.rejects(gw.login(fields.no_pegawai, 'Hack#Passw0rd'));
      const other = await gw.createUser();
      assert.equal((await call('PUT', `${BASE}/${id}`, { email: other.fields.email })).statusCode, 400);
      assert.equal((await call('PUT', `${BASE}/${id}`, { tipe_pegawai: 'nope' })).statusCode, 400);
      assert.equal((await call('PUT', `${BASE}/00000000-0000-4000-8000-000000000000`, { nama: 'x' })).statusCode, 404);
    });

    test('hak-akses: change, unknown right 400, and the last administrator cannot be demoted', async () => {
      const { id, fields } = await gw.createUser();
      const response = await call('PUT', `${BASE}/${id}/hak-akses`, { hak_akses_id: 'admin' });
      assert.equal(response.statusCode, 200);
      assert.deepEqual(Object.keys(response.json()).sort(), ['code', 'message', 'status']);
      const promoted = await gw.login(fields.no_pegawai, fields.kata_sandi);
      assert.equal((await call('GET', BASE, undefined, promoted)).statusCode, 200, 'the new right takes effect at once');
      assert.equal((await call('PUT', `${BASE}/${id}/hak-akses`, { hak_akses_id: 'nope' })).statusCode, 400);
      assert.equal((await call('PUT', `${BASE}/${id}/hak-akses`, { hak_akses_id: 'pegawai' })).statusCode, 200);
      assert.equal((await call('GET', BASE, undefined, promoted)).statusCode, 403, 'demotion takes effect at once');
      const me = (await call('GET', '/api/v1/auth/profile')).json().data.id;
      const lastAdmin = await call('PUT', `${BASE}/${me}/hak-akses`, { hak_akses_id: 'pegawai' });
      assert.equal(lastAdmin.statusCode, 400);
      assert.match(lastAdmin.json().message, /Administrator terakhir/);
    });

    test("reset-password is for administrators: 403 otherwise; it ends the user's sessions", async () => {
      const { id, fields } = await gw.createUser();
      const userToken = await gw.login(fields.no_pegawai, fields.kata_sandi);
      const forbidden = await call('POST', `${BASE}/${id}/reset-password`, { kata_sandi: 'Baru#Sandi9' }, userToken);
      assert.equal(forbidden.statusCode, 403);
      assert.equal(forbidden.json().status, false);
      assert.equal((await call('POST', `${BASE}/${id}/reset-password`, { kata_sandi: 'weakpass' })).statusCode, 400);
      const response = await call('POST', `${BASE}/${id}/reset-password`, { kata_sandi: 'Baru#Sandi9' });
      assert.equal(response.statusCode, 200);
      assert.equal((await call('GET', '/api/v1/auth/profile', undefined, userToken)).statusCode, 401);
      await gw.login(fields.no_pegawai, 'Baru#Sandi9');
    });

    test("delete: 200, then 404; the user's tokens die; no self-deletion", async () => {
      const { id, fields } = await gw.createUser();
      const userToken = await gw.login(fields.no_pegawai, fields.kata_sandi);
      const response = await call('DELETE', `${BASE}/${id}`);
      assert.equal(response.statusCode, 200);
      assert.deepEqual(Object.keys(response.json()).sort(), ['code', 'message', 'status']);
      assert.equal((await call('GET', `${BASE}/${id}`)).statusCode, 404);
      assert.equal((await call('DELETE', `${BASE}/${id}`)).statusCode, 404);
      assert.equal((await call('GET', '/api/v1/auth/profile', undefined, userToken)).statusCode, 401);
      const me = (await call('GET', '/api/v1/auth/profile')).json().data.id;
      assert.equal((await call('DELETE', `${BASE}/${me}`)).statusCode, 400);
    });

    test('an ordinary user reads only their own record and manages nothing', async () => {
      const { id, fields } = await gw.createUser();
      const other = await gw.createUser();
      const token = await gw.login(fields.no_pegawai, fields.kata_sandi);
      assert.equal((await call('GET', `${BASE}/${id}`, undefined, token)).statusCode, 200);
      assert.equal((await call('GET', `${BASE}/${other.id}`, undefined, token)).statusCode, 403);
      assert.equal((await call('GET', BASE, undefined, token)).statusCode, 403);
      assert.equal((await call('POST', BASE, newUser(), token)).statusCode, 403);
      assert.equal((await call('PUT', `${BASE}/${id}`, { nama: 'x' }, token)).statusCode, 403);
      assert.equal((await call('PUT', `${BASE}/${id}/hak-akses`, { hak_akses_id: 'admin' }, token)).statusCode, 403);
      assert.equal((await call('DELETE', `${BASE}/${other.id}`, undefined, token)).statusCode, 403);
      assert.equal((await gw.request({ method: 'GET', url: BASE })).statusCode, 401);
      const rights = await call('GET', '/api/v1/hak-akses', undefined, token);
      assert.equal(rights.statusCode, 200);
      assert.deepEqual(
        rights
          .json()
          .data.map((r: { id: string }) => r.id)
          .sort(),
        ['admin', 'pegawai'],
      );
    });

    test('the audit trail records changes, logins and failures, never a password', async () => {
      const { id, fields } = await gw.createUser({ kata_sandi: 'Audit#Sandi77' });
      await gw.login(fields.no_pegawai, fields.kata_sandi);
      await gw.request({
        method: 'POST',
        url: '/api/v1/auth/login',
        payload: { no_pegawai: fields.no_pegawai, kata_sandi: 'Wrong#Sandi77' },
      });
      await call('PUT', `${BASE}/${id}`, { nama: 'Diaudit' });
      await call('DELETE', `${BASE}/${id}`);
      const rows = await gw.audit.list(50);
      const mine = rows.filter((row) => row.target_id === id || row.actor === fields.no_pegawai);
      const actions = mine.map((row) => `${row.action}:${row.outcome}`);
      for (const expected of [
        'user.create:success',
        'auth.login:success',
        'auth.login:failure',
        'user.update:success',
        'user.delete:success',
      ]) {
        assert.ok(actions.includes(expected), `${expected} in ${actions.join(', ')}`);
      }
      assert.ok(mine.every((row) => row.ip && row.at));
      assert.ok(!JSON.stringify(rows).includes('Audit#Sandi77') && !JSON.stringify(rows).includes('Wrong#Sandi77'));
    });
  });

  describe(`user list, filter and sort [${dialect}]`, () => {
    let gw: TestGateway;
    let admin: string;
    before(async () => {
      gw = await startTestGateway(dialect);
      admin = await gw.login();
      const people: [string, string, 'pns' | 'pjlp' | 'bpjs', string][] = [
        ['A001', 'Budi Santoso', 'pns', 'budi@example.go.id'],
        ['A002', 'budi rahman', 'pjlp', 'rahman@example.go.id'],
        ['A003', 'Siti, Aminah', 'bpjs', 'siti@example.go.id'],
        ['A004', 'Dewi 100%_Sari', 'pns', 'dewi@example.go.id'],
      ];
      for (const [no_pegawai, nama, tipe_pegawai, email] of people) {
        await gw.createUser({ no_pegawai, nama, tipe_pegawai, email });
        gw.clock.advance(1000);
      }
      for (let i = 0; i < 21; i++) await gw.createUser({ no_pegawai: `B${String(i).padStart(3, '0')}` });
    });
    after(async () => gw.close());

    const list = (query: string) => gw.request({ method: 'GET', url: `${BASE}?${query}`, headers: { authorization: admin } });
    const names = async (filter: string) => {
      const response = await list(`per_page=100&filter=${encodeURIComponent(filter)}`);
      assert.equal(response.statusCode, 200, `${filter}: ${response.body}`);
      return response
        .json()
        .data.map((u: { no_pegawai: string }) => u.no_pegawai)
        .sort();
    };

    test('pagination defaults and info (spec 2.1, 4.2, 8)', async () => {
      const first = await list('');
      assert.equal(first.statusCode, 200);
      const body = first.json();
      assert.equal(body.data.length, 10);
      assert.deepEqual(body.info, { total: 26, per_page: 10, page: 1, pages: 3, count: 10 });
      assert.deepEqual(Object.keys(body.data[0]).sort(), [
        'created_at',
        'email',
        'hak_akses_id',
        'id',
        'nama',
        'no_pegawai',
        'tipe_pegawai',
        'updated_at',
      ]);
      const last = (await list('page=3&per_page=10')).json();
      assert.deepEqual(last.info, { total: 26, per_page: 10, page: 3, pages: 3, count: 6 });
      const beyond = (await list('page=9')).json();
      assert.deepEqual([beyond.data.length, beyond.info.count], [0, 0]);
      const ids = new Set<string>();
      for (let page = 1; page <= 3; page++) for (const u of (await list(`page=${page}`)).json().data) ids.add(u.id);
      assert.equal(ids.size, 26, 'pages do not overlap');
      for (const bad of ['per_page=101', 'per_page=0', 'page=0', 'page=abc', 'per_page=-1'])
        assert.equal((await list(bad)).statusCode, 400, bad);
    });

    test('every operator of spec 4.2', async () => {
      assert.deepEqual(await names('no_pegawai,=,A001'), ['A001']);
      assert.deepEqual(await names('nama,like,budi'), ['A002'], 'like is case sensitive');
      assert.deepEqual(await names('nama,ilike,BUDI'), ['A001', 'A002'], 'ilike is not');
      assert.deepEqual(await names('no_pegawai,>,A003;no_pegawai,<,B000'), ['A004']);
      assert.deepEqual(await names('no_pegawai,>=,A003;no_pegawai,<=,A004'), ['A003', 'A004']);
      assert.deepEqual(await names('no_pegawai,<>,A001;no_pegawai,<,B'), ['A002', 'A003', 'A004']);
      assert.deepEqual(await names('no_pegawai,in,A001|A003|nope'), ['A001', 'A003']);
      assert.deepEqual(await names('tipe_pegawai,=,pns;no_pegawai,like,A'), ['A001', 'A004']);
    });

    test('values may hold commas, %, _ and quotes; they are data, never SQL', async () => {
      assert.deepEqual(await names('nama,=,Siti, Aminah'), ['A003']);
      assert.deepEqual(await names('nama,like,100%_'), ['A004']);
      assert.deepEqual(await names('nama,like,%'), ['A004']);
      assert.deepEqual(await names("nama,=,x' OR '1'='1"), []);
      assert.deepEqual(await names("nama,ilike,') OR 1=1 --"), []);
      const split = await list(`filter=${encodeURIComponent("nama,=,'); DROP TABLE users; --")}`);
      assert.equal(split.statusCode, 400, '; separates conditions, so the rest is a malformed condition');
      assert.equal((await list('')).json().info.total, 26);
    });

    test('unknown columns and operators are 400', async () => {
      for (const filter of ['password_hash,=,x', 'nama,~,x', 'nama', 'nama,like', 'id;drop,=,x', '1=1,=,1']) {
        const response = await list(`filter=${encodeURIComponent(filter)}`);
        assert.equal(response.statusCode, 400, filter);
        assert.equal(response.json().status, false);
      }
    });

    test('sort by a documented column', async () => {
      const asc = (await list(`per_page=4&filter=${encodeURIComponent('no_pegawai,like,A')}&sort=nama,asc`))
        .json()
        .data.map((u: { nama: string }) => u.nama);
      assert.equal(asc.length, 4);
      const desc = (await list(`per_page=4&filter=${encodeURIComponent('no_pegawai,like,A')}&sort=no_pegawai,desc`))
        .json()
        .data.map((u: { no_pegawai: string }) => u.no_pegawai);
      assert.deepEqual(desc, ['A004', 'A003', 'A002', 'A001']);
      assert.equal((await list('sort=password_hash')).statusCode, 400);
      assert.equal((await list('sort=nama,sideways')).statusCode, 400);
    });
  });
}
