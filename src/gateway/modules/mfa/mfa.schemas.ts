import { Type } from 'typebox';

/** A six-digit TOTP code (spaces allowed, as apps show them) or a recovery code `XXXXX-XXXXX`. */
export const Code = Type.String({ minLength: 1, maxLength: 32, description: 'A six-digit TOTP code, or a recovery code' });

export const CodeBody = Type.Object({ code: Code }, { additionalProperties: false });

export const VerifyBody = Type.Object(
  {
    challenge: Type.String({ minLength: 1, maxLength: 200, description: 'data.challenge of the MFA_REQUIRED login answer' }),
    code: Code,
  },
  { additionalProperties: false },
);

export const EnrolmentStarted = Type.Object({
  secret: Type.String({ description: 'Base32 shared secret, for typing into an authenticator app' }),
  otpauth_uri: Type.String({ description: 'otpauth://totp/ URI, for a QR code' }),
});

export const RecoveryCodes = Type.Object({
  recovery_codes: Type.Array(Type.String(), { description: 'Ten single-use codes, shown this once' }),
});

export const MfaStatusData = Type.Object({
  enrolled: Type.Boolean(),
  pending: Type.Boolean({ description: 'Started and waiting for its first code' }),
  confirmed_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  recovery_codes_left: Type.Integer(),
});
