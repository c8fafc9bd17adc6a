/** The auth plugin's defaults (`auth`: where the token is read, how it is signed). */
export const AUTH_DEFAULTS = Object.freeze({
  method: 'header',
  headerName: 'authorization',
  cookieName: 'auth_token',
  algorithms: Object.freeze(['HS256']),
  /** Lifetime of the tokens the server signs when the call names none. */
  expiresIn: '1h',
} as const)
