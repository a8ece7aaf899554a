import { Type } from 'typebox';
import { Password, UserSummary } from '../users/users.schemas.js';

export const LoginBody = Type.Object(
  { no_pegawai: Type.String({ minLength: 1, maxLength: 64 }), kata_sandi: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

export const LoginData = Type.Object({ token: Type.String({ description: 'Wrapped token (spec 2.3)' }), user: UserSummary });

export const TokenData = Type.Object({ token: Type.String({ description: 'Wrapped token (spec 2.3)' }) });

export const ChangePasswordBody = Type.Object(
  { kata_sandi_lama: Type.String({ maxLength: 1024 }), kata_sandi: Password, konfirmasi_kata_sandi: Type.String({ maxLength: 1024 }) },
  { additionalProperties: false },
);

export const ChangeExpiredPasswordBody = Type.Object(
  {
    no_pegawai: Type.String({ minLength: 1, maxLength: 64 }),
    ...ChangePasswordBody.properties,
    code: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 32,
        description: 'A current TOTP code or a recovery code: required when the account has a second factor',
      }),
    ),
  },
  { additionalProperties: false },
);

/**
 * OpenAPI security requirement of every protected gateway route and proxied operation: the token in
 * `Authorization`, or (browsers after SSO) the `access_token` cookie. Schemes in app.ts.
 */
export const SECURED: { [scheme: string]: string[] }[] = [{ gatewayToken: [] }, { ssoCookie: [] }];
