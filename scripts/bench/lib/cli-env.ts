// The environment a bench runs gds in against an in-process server: its own config folder under `dir`,
// secrets in a file, the server's REST base URL and its ADMIN's CLI token.
import { join } from 'node:path';
import type { TestServer } from '../../../test/helpers/server.js';

export function benchCliEnv(server: TestServer, dir: string): Record<string, string> {
  return {
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('ADMIN').cliToken,
  };
}
