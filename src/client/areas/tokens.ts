// Integration tokens (§4.1, §4.2): issue a DATA-API or MANAGEMENT token, rotate its refresh token.
import type { IssuedToken, IssueTokenRequest, RefreshResponse, Schema } from '../../contract/types.js';

export type IntegrationTokenInfo = Schema<'IntegrationTokenInfo'>;
export type CliTokenInfo = Schema<'CliTokenInfo'>;
export type CreatedCliToken = Schema<'CreatedCliToken'>;
export type ShortLivedTokenRequest = Schema<'ShortLivedTokenRequest'>;
export type ShortLivedToken = Schema<'ShortLivedToken'>;
import { pathOf } from '../transport.js';
import type { CallOptions, Transport } from '../transport.js';

export interface TokensApi {
  /** Issue with a person's session; the refresh token in the answer is shown only this once. */
  issue(request: IssueTokenRequest, options?: CallOptions): Promise<IssuedToken>;
  /** Spend `refreshToken` for a new access and refresh token; sent without an Authorization header. */
  refresh(refreshToken: string, options?: CallOptions): Promise<RefreshResponse>;
  /** Integration tokens, client tokens masked: the workspace's for an OWNER or ADMIN, else the caller's own. */
  list(userId?: string, options?: CallOptions): Promise<{ tokens: IntegrationTokenInfo[] }>;
  /** Revokes an integration token by its `tf_` client token or its id (its issuer, an OWNER or ADMIN). */
  revoke(reference: string, options?: CallOptions): Promise<{ token: IntegrationTokenInfo }>;
  /** A person's CLI tokens (the caller's own without `userId`). */
  listCli(userId?: string, options?: CallOptions): Promise<{ tokens: CliTokenInfo[] }>;
  /** Revokes a CLI token by id (its holder, an OWNER or ADMIN). */
  revokeCli(tokenId: string, options?: CallOptions): Promise<{ token: CliTokenInfo }>;
  /** Creates a named CLI token for the signed-in person; the answer holds it whole, once. */
  createCli(name: string, options?: CallOptions): Promise<CreatedCliToken>;
  /** A 60-minute access token drawn on the caller's own CLI token or sign-in (nothing stored, nothing renews it). */
  drawShortLived(request: ShortLivedTokenRequest, options?: CallOptions): Promise<ShortLivedToken>;
  /** Revokes the credential this call is made with. */
  revokeOwn(options?: CallOptions): Promise<void>;
}

export function tokensApi(transport: Transport): TokensApi {
  return {
    async issue(request, options) {
      return transport.send<IssuedToken>({
        method: 'POST',
        path: '/api/integration/tokens',
        body: request,
        ...options,
      });
    },
    async refresh(refreshToken, options) {
      return transport.send<RefreshResponse>({
        method: 'POST',
        path: '/api/integration/refresh',
        body: { refreshToken },
        authenticated: false,
        ...options,
      });
    },
    async list(userId, options) {
      return transport.send({
        method: 'GET',
        path: '/api/integration/tokens',
        ...(userId === undefined ? {} : { query: { userId } }),
        ...options,
      });
    },
    async revoke(reference, options) {
      return transport.send({
        method: 'POST',
        path: '/api/integration/tokens/revoke',
        body: { token: reference },
        ...options,
      });
    },
    async listCli(userId, options) {
      return transport.send({
        method: 'GET',
        path: '/api/cli-tokens',
        ...(userId === undefined ? {} : { query: { userId } }),
        ...options,
      });
    },
    async revokeCli(tokenId, options) {
      return transport.send({
        method: 'POST',
        path: pathOf('/api/cli-tokens/{tokenId}/revoke', { tokenId }),
        body: {},
        ...options,
      });
    },
    async createCli(name, options) {
      return transport.send({ method: 'POST', path: '/api/cli-tokens', body: { name }, ...options });
    },
    async drawShortLived(request, options) {
      return transport.send({
        method: 'POST',
        path: '/api/integration/short-lived-tokens',
        body: request,
        ...options,
      });
    },
    async revokeOwn(options) {
      await transport.send({ method: 'POST', path: '/api/auth/revoke', body: {}, ...options });
    },
  };
}
