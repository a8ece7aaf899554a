import { buildLogsService, type LogsService } from '../../src/logs/app.js';
import { loadLogsConfig } from '../../src/logs/config.js';
import type { DialectName } from '../../src/shared/db/database.js';
import { TestClock } from './clock.js';
import { createTestDatabase } from './databases.js';

export const LOGS_ADMIN = 'admin';
export const LOGS_ADMIN_PASSWORD = 'Admin#Passw0rd';
export const PASSWORD = 'Rahasia#123';

import type { InjectOptions, Response as InjectResponse } from 'light-my-request';

export interface TestLogs extends LogsService {
  clock: TestClock;
  url: string;
  request(options: InjectOptions): Promise<InjectResponse>;
  /** Logs in; returns the spec 2.5 token object. */
  login(
    username?: string,
    password?: string,
  ): Promise<{ access_token: string; refresh_token: string; expires_in: number; token_type: string }>;
  /** Authorization header of the administrator. */
  admin(): Promise<Record<string, string>>;
  /** A user in the tenant (default: the admin's) with the given permissions, through the API; returns its bearer headers. */
  userWith(
    permissions: string[],
    options?: { tenantId?: string; username?: string },
  ): Promise<{ headers: Record<string, string>; id: string; username: string }>;
  close(): Promise<void>;
}

let sequence = 0;
export function uniqueName(prefix: string): string {
  sequence += 1;
  return `${prefix}${process.pid}x${sequence}`;
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A logs service on a fresh database of the dialect, with a known administrator and an injected clock. */
export async function startTestLogs(dialect: DialectName, env: Record<string, string> = {}): Promise<TestLogs> {
  const database = await createTestDatabase(dialect);
  const clock = new TestClock();
  const config = loadLogsConfig({
    LOGS_DATABASE_URL: database.url,
    LOGS_ADMIN_PASSWORD: LOGS_ADMIN_PASSWORD,
    LOG_LEVEL: 'silent',
    LOGS_RETENTION_INTERVAL: '0',
    LOGS_LOGIN_RATE_PER_ADDRESS: '100000',
    LOGS_LOGIN_MAX_FAILURES_PER_USERNAME: '1000',
    // The administrator signs in with a password alone unless a test asks for enforcement.
    LOGS_MFA_REQUIRED_PERMISSIONS: 'none',
    ...env,
  });
  const service = await buildLogsService({ config, now: clock.now });
  const app = service.app;
  const request = (options: InjectOptions) => app.inject(options);
  const login = async (username = LOGS_ADMIN, password = LOGS_ADMIN_PASSWORD) => {
    const response = await request({ method: 'POST', url: '/api/login', payload: { username, password } });
    if (response.statusCode !== 200) throw new Error(`login failed: ${response.statusCode} ${response.body}`);
    return response.json().token;
  };
  // Reused while younger than a minute of the test clock (tests move the clock past token expiry).
  let adminToken: { headers: Record<string, string>; at: number } | undefined;
  const admin = async () => {
    if (!adminToken || clock.ms - adminToken.at > 60_000 || clock.ms < adminToken.at)
      adminToken = { headers: bearer((await login()).access_token), at: clock.ms };
    return adminToken.headers;
  };
  return {
    ...service,
    clock,
    url: database.url,
    request,
    login,
    admin,
    async userWith(permissions, options = {}) {
      const headers = { ...(await admin()), ...(options.tenantId ? { 'x-tenant-id': options.tenantId } : {}) };
      const roleName = uniqueName('role');
      const role = await request({ method: 'POST', url: '/api/roles', headers, payload: { name: roleName, permissions } });
      if (role.statusCode !== 201) throw new Error(`create role failed: ${role.statusCode} ${role.body}`);
      const username = options.username ?? uniqueName('user');
      const user = await request({
        method: 'POST',
        url: '/api/users',
        headers,
        payload: { username, email: `${username}@example.go.id`, password: PASSWORD, roles: [roleName] },
      });
      if (user.statusCode !== 201) throw new Error(`create user failed: ${user.statusCode} ${user.body}`);
      return { headers: bearer((await login(username, PASSWORD)).access_token), id: user.json().id as string, username };
    },
    async close() {
      await app.close();
      await database.drop();
    },
  };
}
