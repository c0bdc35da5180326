// OAuth errors travel as RFC 6749 §5.2 bodies `{"error","error_description"}`, not as the service's
// error body: openid-client and any other OAuth client read them.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'unsupported_grant_type'
  | 'authorization_pending'
  | 'slow_down'
  | 'access_denied'
  | 'expired_token';

/** Always status 400: the one client is public, so even `invalid_client` carries no authentication. */
export class OAuthError extends Error {
  constructor(
    readonly error: OAuthErrorCode,
    readonly description: string,
  ) {
    super(description);
  }

  body() {
    return { error: this.error, error_description: this.description };
  }
}
