// The authorization-server half of the reference server (RFC 8628 device authorization, RFC 8414
// metadata): its one public client, its scopes, and the lifetimes tests may shorten.

/** The CLI: a public client (no secret), RFC 8628's typical device client. */
export const CLI_CLIENT_ID = 'gds-cli';
export const SUPPORTED_SCOPES = ['openid', 'offline_access'] as const;
export const DEVICE_CODE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
export const REFRESH_TOKEN_GRANT = 'refresh_token';
/** Spec §2: a refresh token lives 30 days, a person's session's and an integration token's alike. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/** RFC 8628's `interval` when the server names none: a client waits 5 s between two polls. */
export const DEFAULT_DEVICE_INTERVAL_SECONDS = 5;

export interface DeviceFlowOptions {
  /** Seconds a client waits between polls (RFC 8628 `interval`); default 5. */
  intervalSeconds?: number;
  /** Seconds a device code stays usable; default 600. */
  expiresInSeconds?: number;
  /** Device sign-ins one client address may start a minute before 429; default 60. */
  codesPerAddressPerMinute?: number;
  /** Device codes waiting for a person at once, from everyone, before 429; default 1,000. */
  maxPendingCodes?: number;
}

export type DeviceFlowSettings = Required<DeviceFlowOptions>;

export function deviceFlowSettings(options: DeviceFlowOptions = {}): DeviceFlowSettings {
  return {
    intervalSeconds: options.intervalSeconds ?? DEFAULT_DEVICE_INTERVAL_SECONDS,
    expiresInSeconds: options.expiresInSeconds ?? 600,
    codesPerAddressPerMinute: options.codesPerAddressPerMinute ?? 60,
    maxPendingCodes: options.maxPendingCodes ?? 1000,
  };
}

export const paths = {
  discovery: '/.well-known/openid-configuration',
  jwks: '/.well-known/jwks.json',
  deviceAuthorization: '/oauth/device/code',
  token: '/oauth/token',
  verification: '/device',
} as const;

/** The RFC 8414 / OpenID discovery document: the issuer is the REST base URL, the endpoints are at the origin. */
export function discoveryDocument(issuer: string, origin: string) {
  return {
    issuer,
    device_authorization_endpoint: `${origin}${paths.deviceAuthorization}`,
    token_endpoint: `${origin}${paths.token}`,
    jwks_uri: `${origin}${paths.jwks}`,
    grant_types_supported: [DEVICE_CODE_GRANT, REFRESH_TOKEN_GRANT],
    scopes_supported: [...SUPPORTED_SCOPES],
    response_types_supported: [],
    token_endpoint_auth_methods_supported: ['none'],
  };
}

/** The requested scopes, or null when one is not supported. Absent means all of them. */
export function grantedScope(requested: string | undefined): string | null {
  const scopes = (requested ?? SUPPORTED_SCOPES.join(' ')).split(' ').filter((s) => s !== '');
  if (!scopes.every((s) => (SUPPORTED_SCOPES as readonly string[]).includes(s))) return null;
  return scopes.length === 0 ? SUPPORTED_SCOPES.join(' ') : scopes.join(' ');
}
