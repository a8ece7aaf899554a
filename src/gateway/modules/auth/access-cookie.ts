/** Spec 4.3: the application token, also in a cookie of this name. */
export const ACCESS_COOKIE = 'access_token';
