// An API client of the in-process test server holding one token, with no waiting between retries and no log.
import { createApiClient, staticToken } from '../../src/client/index.js';
import type { ApiClient } from '../../src/client/index.js';

export function testClient(baseUrl: string, token: string): ApiClient {
  return createApiClient({ baseUrl, auth: staticToken(token), sleep: async () => {}, logger: () => {} });
}
