import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { AppError } from '../../../shared/errors/app-error.js';
import type { GatewaySchema, UsersTable } from '../../db/schema.js';
import { auditActor, type AuditRepository } from '../audit/audit.repository.js';
import type { AuthService, Client } from '../auth/auth.service.js';
import { SharedRateLimiter } from '../../../shared/auth/shared-rate-limiter.js';
import type { AuthContext } from '../auth/tokens.js';
import type { UsersRepository } from '../users/users.repository.js';
import type { UsersService } from '../users/users.service.js';
import { generatedNoPegawai, identityFromClaims, type SsoIdentity } from './claims-mapping.js';
import { CLOCK_TOLERANCE_S, refuse, verifyIdToken } from './id-token.js';
import { nonceMatches } from './sso-cookies.js';
import type { ProviderKeys } from './provider-keys.js';
import type { SsoConfig } from './sso.config.js';
import type { SsoRepository } from './sso.repository.js';
import { dict } from '../../../shared/dict.js';

/**
 * OIDC_REQUIRED_ACR / OIDC_REQUIRED_AMR: how the person must have signed in at the provider (for
 * example with a second factor). `acr` must be one of the configured values; `amr` must contain
 * at least one of them. A token without the claim is refused when the requirement is set.
 */
export function checkAuthenticationContext(claims: Readonly<Record<string, unknown>>, config: SsoConfig): void {
  if (config.requiredAcr.length > 0 && !(typeof claims.acr === 'string' && config.requiredAcr.includes(claims.acr)))
    throw refuse('SSO_AUTH_CONTEXT_REFUSED');
  if (config.requiredAmr.length > 0) {
    const amr = Array.isArray(claims.amr) ? claims.amr.filter((value): value is string => typeof value === 'string') : [];
    if (!amr.some((value) => config.requiredAmr.includes(value))) throw refuse('SSO_AUTH_CONTEXT_REFUSED');
  }
}

/** Accounts made by SSO get the ordinary employee right (seeded by the first migration), never more. */
export const SSO_HAK_AKSES_ID = 'pegawai';

export interface SsoLoginInput {
  idToken: string;
  accessToken?: string | undefined;
  profile?: { email?: string | undefined; name?: string | undefined; sub?: string | undefined } | undefined;
  /** The value of the nonce cookie, when the browser sent one. */
  nonce?: string | undefined;
}

/** Spec 2.4 response fields, plus the issued token for the cookie. */
export interface SsoLoginResult {
  token: string;
  user_id: string;
  name: string;
  email: string;
  user_groups: string[];
  attributes: Record<string, string>;
}

export interface SsoServiceDeps {
  config: SsoConfig | undefined;
  keys: ProviderKeys | undefined;
  db: Kysely<GatewaySchema>;
  sso: SsoRepository;
  users: UsersRepository;
  usersService: UsersService;
  auth: AuthService;
  audit: AuditRepository;
  now: () => number;
  limits: { perAddress: number; windowMs: number };
}

/**
 * Exchanges a verified OIDC identity for a gateway session (spec 4.3). Everything about the user
 * comes from the verified ID token; the request's `profile` can only be refused, never believed.
 * Each refusal is a 401 naming its reason, is logged and audited, and creates no account.
 */
export class SsoService {
  /**
   * Refusals per client address, counted in the database like the password lockout (every instance
   * sees the same count); a flood of bad tokens gets 429 before any verification work.
   */
  private readonly refusalsPerAddress: SharedRateLimiter<GatewaySchema>;

  constructor(private readonly deps: SsoServiceDeps) {
    this.refusalsPerAddress = new SharedRateLimiter(
      deps.db,
      'sso-address:',
      { limit: deps.limits.perAddress, windowMs: deps.limits.windowMs },
      deps.now,
    );
  }

  /**
   * An administrator's unlink (Keycloak's "unlink identity provider"): the user's provider
   * identities are removed, so the next SSO login links or creates an account afresh (the way out of
   * SSO_ACCOUNT_CONFLICT once an address has passed to someone else). Works whether or not SSO is
   * configured now. Returns how many identities were removed.
   */
  async unlinkIdentities(userId: string, actor: AuthContext, client: Client): Promise<number> {
    const user = await this.deps.users.findById(userId);
    if (!user) throw new AppError('USER_NOT_FOUND');
    return this.deps.db.transaction().execute(async (trx) => {
      const removed = await this.deps.sso.unlinkAll(user.id, trx);
      if (removed.length > 0) {
        await this.deps.audit.record(
          {
            action: 'sso.unlink_identity',
            outcome: 'success',
            ...auditActor(actor),
            targetType: 'user',
            targetId: user.id,
            ...client,
            details: { identities: removed },
          },
          trx,
        );
      }
      return removed.length;
    });
  }

  /** The configuration, or 503 when SSO is not set up. */
  requireConfig(): SsoConfig {
    if (!this.deps.config || !this.deps.keys) throw new AppError('SSO_NOT_CONFIGURED');
    return this.deps.config;
  }

  async login(input: SsoLoginInput, client: Client, log: FastifyBaseLogger): Promise<SsoLoginResult> {
    const config = this.requireConfig();
    const limited = await this.refusalsPerAddress.check(client.ip);
    if (limited.limited) {
      log.warn({ sso: { reason: 'locked_out' } }, 'sso login refused');
      await this.deps.audit.record({ action: 'sso.login', outcome: 'failure', ...client, details: { reason: 'locked_out' } });
      throw new AppError('TOO_MANY_ATTEMPTS', {
        params: { seconds: limited.retryAfterSeconds },
        headers: { 'retry-after': String(limited.retryAfterSeconds) },
      });
    }
    let identity: SsoIdentity | undefined;
    try {
      const verified = await verifyIdToken(input.idToken, input.accessToken, config, this.deps.keys!, this.deps.now());
      identity = identityFromClaims(verified.claims, config);
      checkAuthenticationContext(verified.claims, config);
      this.checkProfile(input.profile, identity, verified.claims.name);
      this.checkNonce(config, input.nonce, verified.claims.nonce);
      const keepUntil = new Date((verified.claims.exp + CLOCK_TOLERANCE_S) * 1000).toISOString();
      if (!(await this.deps.sso.markTokenUsed(verified.replayKey, keepUntil, new Date(this.deps.now()).toISOString())))
        throw refuse('SSO_TOKEN_REPLAYED');

      const user = await this.account(identity, config, client);
      const claims = { email: user.email, user_groups: identity.groups, attributes: identity.attributes };
      const token = await this.deps.auth.startSession(user, client, claims, 'sso');
      await this.deps.audit.record({
        action: 'sso.login',
        outcome: 'success',
        ...auditActor(user),
        targetType: 'user',
        targetId: user.id,
        ...client,
        details: { issuer: identity.issuer, subject: identity.subject },
      });
      return { token: token.wrapped, user_id: user.id, name: user.nama, ...claims };
    } catch (error) {
      if (error instanceof AppError && error.status === 401) {
        await this.refusalsPerAddress.hit(client.ip);
        const reason = error.code;
        // Never the tokens: only what the refusal was and, once verified, whose identity it was.
        const who = identity ? { issuer: identity.issuer, subject: identity.subject } : {};
        log.warn({ sso: { reason, ...who } }, 'sso login refused');
        await this.deps.audit.record({
          action: 'sso.login',
          outcome: 'failure',
          actor: identity?.email ? `sso:${identity.email}` : null,
          ...client,
          details: dict<unknown>({ reason, ...who }),
        });
      }
      throw error;
    }
  }

  /** A `profile` that says anything the token does not is refused: a client mixing identities is broken or lying. */
  private checkProfile(profile: SsoLoginInput['profile'], identity: SsoIdentity, tokenName: unknown): void {
    if (!profile) return;
    const mismatch =
      (profile.sub !== undefined && profile.sub !== identity.subject) ||
      (profile.email !== undefined && profile.email.trim().toLowerCase() !== identity.email) ||
      (profile.name !== undefined && typeof tokenName === 'string' && profile.name.trim() !== tokenName.trim());
    if (mismatch) throw refuse('SSO_PROFILE_MISMATCH');
  }

  /** A token carrying a nonce must come with the same nonce in the browser's cookie. */
  private checkNonce(config: SsoConfig, cookieNonce: string | undefined, tokenNonce: unknown): void {
    if (tokenNonce === undefined) {
      if (config.requireNonce) throw refuse('SSO_NONCE_MISMATCH');
      return;
    }
    if (!nonceMatches(cookieNonce, tokenNonce)) throw refuse('SSO_NONCE_MISMATCH');
  }

  /**
   * The user of this identity: by (issuer, sub) first, then by verified e-mail (spec 4.3.1), else
   * a new account (4.3.2). An unverified e-mail neither links nor creates: whoever controls an
   * account at the provider could otherwise claim someone else's address.
   */
  private async account(identity: SsoIdentity, config: SsoConfig, client: Client, retried = false): Promise<UsersTable> {
    const at = new Date(this.deps.now()).toISOString();
    const linked = await this.deps.sso.findIdentity(identity.issuer, identity.subject);
    if (linked) {
      const user = await this.deps.users.findById(linked.user_id);
      if (user) {
        await this.deps.sso.touchIdentity(identity.issuer, identity.subject, at);
        return this.followEmailChange(user, identity, client);
      }
    }
    if (!identity.email) throw refuse('SSO_EMAIL_MISSING');
    if (!identity.emailVerified) throw refuse('SSO_EMAIL_UNVERIFIED');

    const existing = await this.deps.users.findByEmail(identity.email);
    if (existing) {
      // The account already belongs to another person at this provider (an address handed on).
      if ((await this.deps.sso.identitiesOfUser(existing.id, identity.issuer)).length > 0) throw refuse('SSO_ACCOUNT_CONFLICT');
      await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.sso.linkIdentity({ issuer: identity.issuer, subject: identity.subject, user_id: existing.id, at }, trx);
        await this.deps.audit.record(
          {
            action: 'sso.link_identity',
            outcome: 'success',
            ...auditActor(existing),
            targetType: 'user',
            targetId: existing.id,
            ...client,
            details: { issuer: identity.issuer, subject: identity.subject },
          },
          trx,
        );
      });
      return existing;
    }

    if (identity.noPegawai !== undefined && (await this.deps.users.findByNoPegawai(identity.noPegawai)))
      throw refuse('SSO_ACCOUNT_CONFLICT');
    let user: UsersTable;
    try {
      user = await this.deps.usersService.create(
        {
          no_pegawai: identity.noPegawai ?? generatedNoPegawai(),
          nama: identity.name ?? identity.email,
          email: identity.email,
          tipe_pegawai: identity.tipePegawai,
          hak_akses_id: SSO_HAK_AKSES_ID,
        },
        { id: null, name: `sso:${identity.email}` },
        client,
        'sso.create_user',
      );
    } catch (error) {
      // A concurrent first login of the same person created the account a moment ago.
      if (error instanceof AppError && (error.code === 'EMAIL_TAKEN' || error.code === 'NO_PEGAWAI_TAKEN')) {
        if (!retried) return this.account(identity, config, client, true);
        throw refuse('SSO_ACCOUNT_CONFLICT', error);
      }
      throw error;
    }
    await this.deps.sso.linkIdentity({ issuer: identity.issuer, subject: identity.subject, user_id: user.id, at });
    return user;
  }

  /** The provider's verified new address replaces the stored one, unless another account has it. */
  private async followEmailChange(user: UsersTable, identity: SsoIdentity, client: Client): Promise<UsersTable> {
    if (!identity.email || !identity.emailVerified || identity.email === user.email) return user;
    if (await this.deps.users.findByEmail(identity.email)) return user;
    const at = new Date(this.deps.now()).toISOString();
    await this.deps.db.transaction().execute(async (trx) => {
      await this.deps.users.update(user.id, { email: identity.email!, updated_at: at }, trx);
      await this.deps.audit.record(
        {
          action: 'sso.update_email',
          outcome: 'success',
          ...auditActor(user),
          targetType: 'user',
          targetId: user.id,
          ...client,
          details: { from: user.email, to: identity.email },
        },
        trx,
      );
    });
    return { ...user, email: identity.email, updated_at: at };
  }
}
