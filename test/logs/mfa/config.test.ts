import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadLogsConfig } from '../../../src/logs/config.js';

test('LOGS_MFA_REQUIRED_PERMISSIONS: the administrators by default, none, a list; an unknown permission refused at start', () => {
  assert.deepEqual(loadLogsConfig({}).mfa.requiredPermissions, ['users:manage', 'roles:manage', 'tenants:manage']);
  assert.deepEqual(loadLogsConfig({ LOGS_MFA_REQUIRED_PERMISSIONS: 'none' }).mfa.requiredPermissions, []);
  assert.deepEqual(loadLogsConfig({ LOGS_MFA_REQUIRED_PERMISSIONS: 'audit:read, users:manage' }).mfa.requiredPermissions, [
    'audit:read',
    'users:manage',
  ]);
  assert.throws(
    () => loadLogsConfig({ LOGS_MFA_REQUIRED_PERMISSIONS: 'users:manage,users:admin' }),
    /LOGS_MFA_REQUIRED_PERMISSIONS.*users:admin/,
  );
});

test('passkeys: relying party and origins from configuration, with defaults; an origin off the relying party refused', () => {
  assert.deepEqual(loadLogsConfig({ LOGS_PORT: '8081' }).webauthn, {
    rpId: 'localhost',
    rpName: 'Gerbang Logs',
    origins: ['http://localhost:8081'],
  });
  assert.deepEqual(loadLogsConfig({ LOGS_WEBAUTHN_RP_ID: 'logs.example.go.id' }).webauthn.origins, ['https://logs.example.go.id']);
  assert.deepEqual(
    loadLogsConfig({ LOGS_WEBAUTHN_RP_ID: 'example.go.id', LOGS_WEBAUTHN_ORIGIN: 'https://logs.example.go.id,https://example.go.id:8443' })
      .webauthn.origins,
    ['https://logs.example.go.id', 'https://example.go.id:8443'],
  );
  assert.throws(
    () => loadLogsConfig({ LOGS_WEBAUTHN_RP_ID: 'example.go.id', LOGS_WEBAUTHN_ORIGIN: 'https://example.go.id.evil.test' }),
    /LOGS_WEBAUTHN_ORIGIN/,
  );
  assert.throws(() => loadLogsConfig({ LOGS_WEBAUTHN_ORIGIN: 'https://localhost/console' }), /LOGS_WEBAUTHN_ORIGIN/);
  assert.throws(() => loadLogsConfig({ LOGS_WEBAUTHN_RP_ID: '10.0.0.5' }), /LOGS_WEBAUTHN_RP_ID/);
});
