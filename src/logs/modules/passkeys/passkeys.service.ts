import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type RegistrationResponseJSON,
} from '@simplewebauthn/server';
import { AppError } from '../../../shared/errors/app-error.js';
import type { LogsConfig } from '../../config.js';
import type { LogsPasskeysTable } from '../../db/schema.js';
import { invalidBody } from '../../http/errors.js';
import { auditActor, type LogsAuditRepository } from '../audit/audit.repository.js';
import type { Client } from '../auth/client.js';
import type { LoginGuard } from '../auth/login-guard.js';
import type { LoginAnswer, SessionIssuer } from '../auth/session-issuer.js';
import { challengeHash, type MfaRepository } from '../mfa/mfa.repository.js';
import type { Permission } from '../rbac/permissions.js';
import { assertCanActOnUser } from '../rbac/privilege.js';
import type { LogsUsersRepository } from '../users/users.repository.js';
import type { PasskeysRepository } from './passkeys.repository.js';

/** How long a browser has to answer a ceremony. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;
/** At most this many passkeys per person (each is a row and an entry of every registration's exclude list). */
const MAX_PASSKEYS = 20;

export interface PasskeyView {
  id: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
}

/** The person a request acts as. */
export interface PasskeyActor {
  readonly userId: string;
  readonly username: string;
  readonly email: string;
  readonly homeTenantId: string;
}

export interface PasskeysDeps {
  config: LogsConfig;
  passkeys: PasskeysRepository;
  mfa: MfaRepository;
  users: LogsUsersRepository;
  loginGuard: LoginGuard;
  issuer: SessionIssuer;
  audit: LogsAuditRepository;
  now: () => number;
}

const view = (row: LogsPasskeysTable): PasskeyView => ({
  id: row.id,
  name: row.name,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
});
const transportsOf = (row: LogsPasskeysTable): AuthenticatorTransportFuture[] => {
  const parsed = JSON.parse(row.transports) as unknown;
  return Array.isArray(parsed) ? (parsed.filter((item) => typeof item === 'string') as AuthenticatorTransportFuture[]) : [];
};
type AuthenticatorTransportFuture = NonNullable<RegistrationResponseJSON['response']['transports']>[number];

/**
 * Passkeys for the console (docs/console.md "Passkeys"), with @simplewebauthn/server: registration
 * by a signed-in person, sign-in without a password (the passkey proves possession and, with user
 * verification required, a PIN or biometric: both factors, as GitHub and Grafana count it). Every
 * ceremony's challenge is stored server-side (a row of logs_mfa_challenges), lives 5 minutes and is
 * spent by its first answer, so any instance can finish a ceremony another one began.
 */
export class PasskeysService {
  constructor(private readonly deps: PasskeysDeps) {}

  private nowIso(): string {
    return new Date(this.deps.now()).toISOString();
  }

  async list(actor: PasskeyActor): Promise<PasskeyView[]> {
    return (await this.deps.passkeys.listOf(actor.userId)).map(view);
  }

  async registrationOptions(actor: PasskeyActor): Promise<{ challenge_id: string; options: object }> {
    const existing = await this.deps.passkeys.listOf(actor.userId);
    if (existing.length >= MAX_PASSKEYS) throw invalidBody(`at most ${MAX_PASSKEYS} passkeys: remove one first`);
    const { rpId, rpName } = this.deps.config.webauthn;
    const options = await generateRegistrationOptions({
      rpName,
      rpID: rpId,
      userName: actor.username,
      userDisplayName: actor.username,
      // The user's id (a UUID), not their name or address: what the authenticator keeps.
      userID: new TextEncoder().encode(actor.userId),
      attestationType: 'none',
      excludeCredentials: existing.map((row) => ({ id: row.id, transports: transportsOf(row) })),
      authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
      timeout: PASSKEY_CHALLENGE_TTL_MS,
    });
    const challengeId = await this.deps.mfa.newChallenge(
      'passkey_register',
      actor.userId,
      PASSKEY_CHALLENGE_TTL_MS,
      this.deps.now(),
      options.challenge,
    );
    return { challenge_id: challengeId, options };
  }

  async register(
    actor: PasskeyActor,
    challengeId: string,
    name: string | undefined,
    credential: RegistrationResponseJSON,
    client: Client,
  ): Promise<PasskeyView> {
    const hash = challengeHash(challengeId);
    const challenge = await this.deps.mfa.liveChallenge(hash, 'passkey_register', this.nowIso());
    if (!challenge || challenge.user_id !== actor.userId || !challenge.data) throw invalidBody('challenge_id: unknown, used or expired');
    if (!(await this.deps.mfa.useChallenge(hash, this.nowIso()))) throw invalidBody('challenge_id: unknown, used or expired');
    const { rpId, origins } = this.deps.config.webauthn;
    let verified: Awaited<ReturnType<typeof verifyRegistrationResponse>>;
    try {
      verified = await verifyRegistrationResponse({
        response: credential,
        expectedChallenge: challenge.data,
        expectedOrigin: [...origins],
        expectedRPID: rpId,
        requireUserVerification: true,
      });
    } catch (error) {
      verified = { verified: false };
      void error;
    }
    if (!verified.verified) {
      await this.audited(actor, 'auth.passkey_register', 'failure', client, { reason: 'not_verified' });
      throw invalidBody('credential: not a valid passkey for this site');
    }
    const { credential: made } = verified.registrationInfo;
    if (await this.deps.passkeys.find(made.id)) throw invalidBody('credential: already registered');
    const row: LogsPasskeysTable = {
      id: made.id,
      user_id: actor.userId,
      name: name?.trim() || 'Passkey',
      public_key: Buffer.from(made.publicKey).toString('base64url'),
      counter: made.counter,
      transports: JSON.stringify(made.transports ?? credential.response.transports ?? []),
      created_at: this.nowIso(),
      last_used_at: null,
    };
    await this.deps.passkeys.insert(row);
    await this.audited(actor, 'auth.passkey_register', 'success', client, { passkey: row.id, name: row.name });
    return view(row);
  }

  async remove(actor: PasskeyActor, id: string, client: Client): Promise<void> {
    if (!(await this.deps.passkeys.remove(actor.userId, id))) throw new AppError('LOGS_NOT_FOUND');
    await this.audited(actor, 'auth.passkey_remove', 'success', client, { passkey: id });
  }

  /** The user of the tenant an administrator acts on: users:manage, no more powerful than they are (as DELETE /api/users/:id/mfa). */
  private async target(tenantId: string, userId: string, actor: PasskeyActor & { permissions: ReadonlySet<Permission> }) {
    const user = await this.deps.users.findInTenant(tenantId, userId);
    if (!user) throw new AppError('LOGS_NOT_FOUND');
    if (user.id !== actor.userId) await assertCanActOnUser(actor, this.deps.users, user.id);
    return user;
  }

  /** A user's passkeys, for an administrator. */
  async listFor(tenantId: string, userId: string, actor: PasskeyActor & { permissions: ReadonlySet<Permission> }): Promise<PasskeyView[]> {
    const user = await this.target(tenantId, userId, actor);
    return (await this.deps.passkeys.listOf(user.id)).map(view);
  }

  /** An administrator removes a user's passkey (a lost or stolen authenticator); audited in the user's tenant. */
  async removeFor(
    tenantId: string,
    userId: string,
    id: string,
    actor: PasskeyActor & { permissions: ReadonlySet<Permission> },
    client: Client,
  ): Promise<void> {
    const user = await this.target(tenantId, userId, actor);
    if (!(await this.deps.passkeys.remove(user.id, id))) throw new AppError('LOGS_NOT_FOUND');
    await this.deps.audit.record({
      tenantId,
      action: 'auth.passkey_remove',
      outcome: 'success',
      ...auditActor(actor),
      ...client,
      targetType: 'user',
      targetId: user.id,
      details: { passkey: id, by: 'administrator', username: user.username },
    });
  }

  /** A sign-in ceremony for any passkey of this site (discoverable credentials: no name asked first). */
  async loginOptions(client: Client): Promise<{ challenge_id: string; options: object }> {
    await this.deps.loginGuard.countAttempt(client);
    const options = await generateAuthenticationOptions({
      rpID: this.deps.config.webauthn.rpId,
      userVerification: 'required',
      timeout: PASSKEY_CHALLENGE_TTL_MS,
    });
    const challengeId = await this.deps.mfa.newChallenge(
      'passkey_login',
      null,
      PASSKEY_CHALLENGE_TTL_MS,
      this.deps.now(),
      options.challenge,
    );
    return { challenge_id: challengeId, options };
  }

  /** The login answer for a verified passkey; 401 `invalid credentials` for anything else, audited. */
  async login(challengeId: string, credential: AuthenticationResponseJSON, client: Client): Promise<LoginAnswer> {
    const hash = challengeHash(challengeId);
    const challenge = await this.deps.mfa.liveChallenge(hash, 'passkey_login', this.nowIso());
    if (!challenge?.data || !(await this.deps.mfa.useChallenge(hash, this.nowIso()))) throw new AppError('LOGS_INVALID_TOKEN');
    const passkey = await this.deps.passkeys.find(credential.id);
    const user = passkey ? await this.deps.users.findById(passkey.user_id) : undefined;
    const refused = async (reason: string) => {
      await this.deps.audit.record({
        tenantId: user?.tenant_id ?? 'default',
        action: 'auth.passkey_login',
        outcome: 'failure',
        ...(user ? auditActor(user) : {}),
        ...client,
        details: { reason },
      });
      return new AppError('LOGS_INVALID_CREDENTIALS');
    };
    if (!passkey || !user) throw await refused('unknown_passkey');
    // The authenticator names the account it signed for: it must be the passkey's.
    const handle = credential.response.userHandle;
    if (handle && Buffer.from(handle, 'base64url').toString('utf8') !== user.id) throw await refused('user_handle_mismatch');
    const { rpId, origins } = this.deps.config.webauthn;
    let verified = false;
    let newCounter = passkey.counter;
    try {
      const result = await verifyAuthenticationResponse({
        response: credential,
        expectedChallenge: challenge.data,
        expectedOrigin: [...origins],
        expectedRPID: rpId,
        credential: {
          id: passkey.id,
          publicKey: new Uint8Array(Buffer.from(passkey.public_key, 'base64url')),
          counter: passkey.counter,
          transports: transportsOf(passkey),
        },
        requireUserVerification: true,
      });
      verified = result.verified;
      newCounter = result.authenticationInfo.newCounter;
    } catch {
      verified = false;
    }
    if (!verified) throw await refused('not_verified');
    if (!(await this.deps.passkeys.used(passkey.id, passkey.counter, newCounter, this.nowIso()))) throw await refused('concurrent_use');
    return this.deps.issuer.open(user, client, 'passkey');
  }

  private async audited(
    actor: PasskeyActor,
    action: string,
    outcome: 'success' | 'failure',
    client: Client,
    details: Record<string, unknown>,
  ) {
    await this.deps.audit.record({ tenantId: actor.homeTenantId, action, outcome, ...auditActor(actor), ...client, details });
  }
}
