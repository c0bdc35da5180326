// A token endpoint that quotes the refresh token it refused (an identity provider's error_description): the
// error gds prints masks it, as it masks every credential of the run. The refresh token was never one of the
// run's secrets (only the access tokens it sent were), so a token without a known prefix was printed whole.
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import { writeSessionProfile } from '../server/oauth/oauth-server.js';

const REFRESH_TOKEN = 'Zq8vN3pL0sXw7RtY2kBm5HcJ9dFg4Ua6';
let server: Server;
let url: string;
let dir: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: 'invalid_grant',
          error_description: `refresh token ${REFRESH_TOKEN} was already used`,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  dir = await mkdtemp(join(tmpdir(), 'gds-refresh-masked-'));
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

describe('a refused refresh whose answer quotes the refresh token', () => {
  it.each([[[]], [['--json']]])(
    'gds list %j: exit 3 saying to sign in again, the refresh token masked on stderr',
    async (json) => {
      const env = { GDS_CONFIG_DIR: dir, GDS_SECRET_STORAGE: 'file' };
      await writeSessionProfile(
        env,
        'work',
        url,
        { accessToken: 'eyJ.expired.token', refreshToken: REFRESH_TOKEN },
        new Date(Date.now() - 60_000).toISOString(),
      );
      const r = await runInProcess(['list', '--profile', 'work', ...json], { env });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain('was already used');
      expect(r.stderr).toContain('gds auth login --profile work --force');
      expect(r.stderr).not.toContain(REFRESH_TOKEN);
      expect(r.stdout).not.toContain(REFRESH_TOKEN);
    },
  );
});
