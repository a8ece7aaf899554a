/** What the account routes answer, as the console reads them: the server's schemas, imported as types only. */
import type { Static } from 'typebox';
import type * as mfa from '../../../src/logs/modules/mfa/mfa.schemas.js';
import type * as passkeys from '../../../src/logs/modules/passkeys/passkeys.schemas.js';
import type * as sessions from '../../../src/logs/modules/sessions/sessions.schemas.js';

export type MfaStatus = Static<typeof mfa.MfaStatusResponse>;
export type MfaStart = Static<typeof mfa.MfaStartResponse>;
export type MfaConfirm = Static<typeof mfa.MfaConfirmResponse>;
export type MfaRecoveryCodes = Static<typeof mfa.MfaRecoveryCodesResponse>;
export type PasskeyOptions = Static<typeof passkeys.PasskeyOptionsResponse>;
export type Passkey = Static<typeof passkeys.Passkey>;
export type PasskeysResponse = Static<typeof passkeys.PasskeysResponse>;
export type Session = Static<typeof sessions.Session>;
export type SessionsResponse = Static<typeof sessions.SessionsResponse>;
