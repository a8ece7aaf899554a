import { Type } from 'typebox';

/** Spec 2.4 request. Unknown fields are dropped; `profile` is only compared with the token. */
export const LoginSsoBody = Type.Object(
  {
    id_token: Type.String({ minLength: 1, maxLength: 16_384, description: 'ID token from the identity provider' }),
    access_token: Type.Optional(
      Type.String({ maxLength: 16_384, description: 'Access token from the provider; checked against at_hash, never stored or forwarded' }),
    ),
    profile: Type.Optional(
      Type.Object(
        {
          email: Type.Optional(Type.String({ maxLength: 254 })),
          name: Type.Optional(Type.String({ maxLength: 200 })),
          sub: Type.Optional(Type.String({ maxLength: 255 })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

/** Spec 2.4 response, exactly these fields (not wrapped in the 2.1 envelope). */
export const LoginSsoResponse = Type.Object({
  token: Type.String({ description: 'Gateway application token, wrapped as in spec 2.3 (also set as the access_token cookie)' }),
  user_id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  email: Type.String(),
  user_groups: Type.Array(Type.String()),
  attributes: Type.Record(Type.String(), Type.String()),
});

export const NonceData = Type.Object({
  nonce: Type.String({ description: 'Pass as the `nonce` parameter of the authorization request' }),
  expires_in: Type.Integer({ description: 'Seconds the nonce cookie lives' }),
});
