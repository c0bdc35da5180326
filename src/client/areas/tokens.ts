// Integration tokens (§4.1, §4.2): issue a DATA-API or MANAGEMENT token, rotate its refresh token.
import type { IssuedToken, IssueTokenRequest, RefreshResponse } from '../../contract/types.js';
import type { CallOptions, Transport } from '../transport.js';

export interface TokensApi {
  /** Issue with a person's session; the refresh token in the answer is shown only this once. */
  issue(request: IssueTokenRequest, options?: CallOptions): Promise<IssuedToken>;
  /** Spend `refreshToken` for a new access and refresh token; sent without an Authorization header. */
  refresh(refreshToken: string, options?: CallOptions): Promise<RefreshResponse>;
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
  };
}
