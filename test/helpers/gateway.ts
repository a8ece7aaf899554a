import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { inject } from 'light-my-request';
import { buildGateway, type Gateway } from '../../src/gateway/app.js';
import { loadGatewayConfig } from '../../src/gateway/config.js';
import type { DialectName } from '../../src/shared/db/database.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './databases.js';

export const ADMIN_NO_PEGAWAI = 'admin';
export const ADMIN_PASSWORD = 'Admin#Passw0rd';

export interface TestGateway extends Gateway {
  clock: TestClock;
  /** The database the gateway runs on, for other processes (the CLI) to share. */
  databaseUrl: string;
  request(options: InjectOptions): Promise<LightMyRequestResponse>;
  /** Logs in and returns the wrapped token. */
  login(noPegawai?: string, password?: string): Promise<string>;
  /** Creates a user through the API as the administrator; returns its id. */
  createUser(fields?: Partial<NewUserFields>): Promise<{ id: string; fields: NewUserFields }>;
  close(): Promise<void>;
}

export interface NewUserFields {
  no_pegawai: string;
  nama: string;
  email: string;
  kata_sandi: string;
  tipe_pegawai: 'pns' | 'pjlp' | 'bpjs';
  hak_akses_id: string;
}

let sequence = 0;
/** Factory: a valid, unique user body. */
export function newUser(overrides: Partial<NewUserFields> = {}): NewUserFields {
  sequence += 1;
  const tag = `${process.pid}${sequence}`;
  return {
    no_pegawai: `19800${tag}`,
    nama: `Pegawai ${tag}`,
    email: `pegawai${tag}@example.go.id`,
    kata_sandi: 'Rahasia#123',
    tipe_pegawai: 'pns',
    hak_akses_id: 'pegawai',
    ...overrides,
  };
}

/** A gateway on a fresh database of the dialect, with a known administrator and an injected clock. */
export async function startTestGateway(dialect: DialectName, env: Record<string, string> = {}): Promise<TestGateway> {
  const database = await createTestDatabase(dialect);
  const clock = new TestClock();
  const config = loadGatewayConfig({
    GATEWAY_DATABASE_URL: database.url,
    GATEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const gateway = await buildGateway({ config, now: clock.now });
  const app: FastifyInstance = gateway.app;
  let adminToken: string | undefined;
  await app.ready();
  // Into the server's own handler rather than app.inject: proxied requests never reach Fastify.
  const request = (options: InjectOptions) => inject(gateway.handle, options);
  const login = async (noPegawai = ADMIN_NO_PEGAWAI, password = ADMIN_PASSWORD) => {
    const response = await request({ method: 'POST', url: '/api/v1/auth/login', payload: { no_pegawai: noPegawai, kata_sandi: password } });
    if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
    return response.json().data.token as string;
  };
  return {
    ...gateway,
    clock,
    databaseUrl: database.url,
    request,
    login,
    async createUser(overrides = {}) {
      adminToken ??= await login();
      const fields = newUser(overrides);
      const response = await request({ method: 'POST', url: '/api/v1/pengguna', headers: { authorization: adminToken }, payload: fields });
      if (response.statusCode !== 201) throw new Error(`create user failed: ${response.statusCode} ${response.body}`);
      return { id: response.json().data.id as string, fields };
    },
    async close() {
      await app.close();
      await database.drop();
    },
  };
}
