import { Type } from 'typebox';

const Id = Type.String({ format: 'uuid' });

export const SessionParams = Type.Object({ sessionId: Id });
export const UserSessionParams = Type.Object({ id: Id, sessionId: Id });

export const SessionItem = Type.Object({
  id: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  last_used_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'To the minute (docs/api.md)' }),
  expires_at: Type.String({ format: 'date-time' }),
  ip: Type.Union([Type.String(), Type.Null()]),
  user_agent: Type.Union([Type.String(), Type.Null()]),
  auth_method: Type.Union([Type.String(), Type.Null()], { description: 'password, password+totp, recovery_code or sso' }),
  current: Type.Boolean({ description: 'The session of this request' }),
});

export const EndedCount = Type.Object({ ended: Type.Integer() });
