import { Type } from 'typebox';

/** Request and response schemas of /api/sessions and /api/users/:id/sessions; also the console's types. */

const Nullable = Type.Union([Type.String(), Type.Null()]);

export const Session = Type.Object({
  id: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()], { description: 'Updated at most once a minute' }),
  expires_at: Type.String(),
  ip: Nullable,
  user_agent: Nullable,
  method: Type.Union([Type.String(), Type.Null()], {
    description: 'password, password+totp, password+recovery_code or passkey (null: before this was recorded)',
  }),
  current: Type.Boolean({ description: 'The session of this request' }),
});
export const SessionsResponse = Type.Object({ sessions: Type.Array(Session) });
export const SessionIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const UserSessionsParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
export const UserSessionParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  session: Type.String({ minLength: 1, maxLength: 64 }),
});
export const SessionEndedResponse = Type.Object({ status: Type.Literal('ok') });
export const SessionsEndedResponse = Type.Object({ ended: Type.Integer({ description: 'How many sessions ended' }) });
