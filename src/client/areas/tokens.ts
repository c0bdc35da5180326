// Integration tokens (§4.1, §4.2): issue a DATA-API or MANAGEMENT token, rotate its refresh token.
import type { IssuedToken, IssueTokenRequest, RefreshResponse, Schema } from '../../contract/types.js';

export type IntegrationTokenInfo = Schema<'IntegrationTokenInfo'>;
export type CliTokenInfo = Schema<'CliTokenInfo'>;
import type { CallOptions, Transport } from '../transport.js';

export interface TokensApi {
  /** Issue with a person's session; the refresh token in the answer is shown only this once. */
  issue(request: IssueTokenRequest, options?: CallOptions): Promise<IssuedToken>;
  /** Spend `refreshToken` for a new access and refresh token; sent without an Authorization header. */
  refresh(refreshToken: string, options?: CallOptions): Promise<RefreshResponse>;
  /** The workspace's integration tokens, client tokens masked (OWNER or ADMIN). */
  list(options?: CallOptions): Promise<{ tokens: IntegrationTokenInfo[] }>;
  /** Revokes an integration token by its `tf_` client token or its id (OWNER or ADMIN). */
  revoke(reference: string, options?: CallOptions): Promise<{ token: IntegrationTokenInfo }>;
  /** A person's CLI tokens (the caller's own without `userId`). */
  listCli(userId?: string, options?: CallOptions): Promise<{ tokens: CliTokenInfo[] }>;
  /** Revokes a CLI token by id (OWNER or ADMIN). */
  revokeCli(tokenId: string, options?: CallOptions): Promise<{ token: CliTokenInfo }>;
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
    async list(options) {
      return transport.send({ method: 'GET', path: '/api/integration/tokens', ...options });
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
        path: `/api/cli-tokens/${encodeURIComponent(tokenId)}/revoke`,
        body: {},
        ...options,
      });
    },
    async revokeOwn(options) {
      await transport.send({ method: 'POST', path: '/api/auth/revoke', body: {}, ...options });
    },
  };
}
