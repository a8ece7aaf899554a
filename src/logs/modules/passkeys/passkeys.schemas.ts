import { Type } from 'typebox';
import { LoginResponse } from '../auth/auth.schemas.js';

/** Request and response schemas of /api/passkeys and /api/login/passkey; also the console's types. */

const B64 = (maxLength: number) => Type.String({ maxLength, pattern: '^[A-Za-z0-9_-]*={0,2}$' });

/** What the browser's credential (`PublicKeyCredential.toJSON()`) carries; the library checks the rest. */
const CredentialJson = (kind: 'registration' | 'authentication') =>
  Type.Object(
    {
      id: B64(1024),
      rawId: B64(1024),
      type: Type.Literal('public-key'),
      response: Type.Object(
        kind === 'registration'
          ? {
              clientDataJSON: B64(16_384),
              attestationObject: B64(65_536),
              transports: Type.Optional(Type.Array(Type.String({ maxLength: 32 }), { maxItems: 16 })),
            }
          : {
              clientDataJSON: B64(16_384),
              authenticatorData: B64(16_384),
              signature: B64(4096),
              userHandle: Type.Optional(Type.Union([B64(1024), Type.Null()])),
            },
      ),
      clientExtensionResults: Type.Optional(Type.Object({})),
      authenticatorAttachment: Type.Optional(Type.Union([Type.String({ maxLength: 32 }), Type.Null()])),
    },
    { description: "The browser's PublicKeyCredential as JSON" },
  );

export const PasskeyOptionsResponse = Type.Object({
  challenge_id: Type.String({ description: 'Send it back with the credential; single use, 5 minutes' }),
  options: Type.Object({}, { additionalProperties: true, description: 'For navigator.credentials (PublicKeyCredential*OptionsJSON)' }),
});
export const PasskeyRegisterBody = Type.Object({
  challenge_id: Type.String({ minLength: 1, maxLength: 128 }),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'How the person calls it; default "Passkey"' })),
  credential: CredentialJson('registration'),
});
export const PasskeyLoginBody = Type.Object({
  challenge_id: Type.String({ minLength: 1, maxLength: 128 }),
  credential: CredentialJson('authentication'),
});
export const Passkey = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
});
export const PasskeysResponse = Type.Object({ passkeys: Type.Array(Passkey) });
export const PasskeyIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 1024 }) });
export const PasskeyLoginResponse = LoginResponse;
export const PasskeyRemovedResponse = Type.Object({ status: Type.Literal('ok') });
export const UserPasskeysParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'The user' }) });
export const UserPasskeyParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The user' }),
  passkeyId: Type.String({ minLength: 1, maxLength: 1024, description: 'The passkey' }),
});
