import { Type } from 'typebox';
import { LoginResponse } from '../auth/auth.schemas.js';

/** Request and response schemas of the second factor (/api/mfa, /api/login/mfa); also the console's types. */

const Code = Type.String({ minLength: 1, maxLength: 32, description: 'The 6-digit code of the app, or a recovery code (XXXXX-XXXXX)' });

export const MfaLoginBody = Type.Object({
  challenge: Type.String({ minLength: 1, maxLength: 128, description: 'From the 401 `mfa.challenge` of POST /api/login' }),
  code: Code,
});
export const MfaCodeBody = Type.Object({ code: Code });
export const MfaStatusResponse = Type.Object({
  totp: Type.Boolean({ description: 'A confirmed authenticator app' }),
  recovery_codes_left: Type.Integer(),
  required: Type.Boolean({ description: 'The configuration requires a second factor of this user (LOGS_MFA_REQUIRED_PERMISSIONS)' }),
});
export const MfaStartResponse = Type.Object({
  secret: Type.String({ description: 'Base32, for typing into the app' }),
  otpauth_uri: Type.String({ description: 'otpauth://totp/... for a QR code' }),
});
export const MfaConfirmResponse = Type.Object({
  recovery_codes: Type.Array(Type.String(), { description: 'Ten single-use codes, in this answer only' }),
  login: Type.Optional(LoginResponse),
});
export const MfaRecoveryCodesResponse = Type.Object({
  recovery_codes: Type.Array(Type.String(), { description: 'Ten new single-use codes, in this answer only; the old ones no longer work' }),
});
export const MfaUserParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const OkResponse = Type.Object({ status: Type.Literal('ok') });
