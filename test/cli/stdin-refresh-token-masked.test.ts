// `printf %s "$REFRESH_TOKEN" | gds tokens refresh`, the way the command itself advises: the refresh token is
// in no flag or variable, so the masking of the run's secrets (SERVICE_TOKEN, --refresh-token's value) did not
// know it, and a refusal that quoted it (the message, `details`, under --json too) printed it whole. A token of
// the service's own shape (rt_…) was caught by its pattern; one of any other shape was not.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

/** A refresh token of no shape core/redact.ts knows: only the run's own secrets can mask it. */
const REFRESH = 'opaqueRefreshQwzrtyXvbnm42Kjhg';

let server: Server;
let base: string;

beforeAll(async () => {
  // A service that refuses the refresh token and says it back, in its message and its details.
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const { refreshToken } = JSON.parse(body || '{}') as { refreshToken?: string };
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          error: {
            code: 'invalid_refresh_token',
            message: `Refresh token ${refreshToken} is unknown or spent.`,
            details: { refreshToken2: refreshToken },
          },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
});

afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe('a refresh token piped into gds tokens refresh, said back by the service', () => {
  it.each([[[]], [['--json']], [['--refresh-token', '-']]])(
    'tokens refresh %j: exit 3, the token never printed',
    async (extra) => {
      const r = await runInProcess(['tokens', 'refresh', ...extra], {
        input: `${REFRESH}\n`,
        env: { SERVICE_API_URL: base, SERVICE_TOKEN: 'cli_abcdefghijklmnopqrstuv', GDS_DEBUG: '1' },
      });
      expect(r.code, r.stderr).toBe(3);
      expect(r.stderr).toContain('is unknown or spent');
      expect(r.stdout + r.stderr).not.toContain(REFRESH);
      expect(r.stdout + r.stderr).not.toContain(REFRESH.slice(0, 12));
    },
  );
});
