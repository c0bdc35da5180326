// `gds tokens refresh --save-profile ci` spends the refresh token it is given: the tokens the service
// answers exist nowhere else. A CI job cancelled (SIGTERM) or a Ctrl-C (SIGINT) after the service spent the
// token and before gds saved its answer would lose them, and with them the integration token. As the
// profile's own renewal does (src/auth/finish-before-exit.ts), the signal waits (bounded) for the save, then
// gds exits 143 or 130. Without --save-profile the tokens are printed once: the signal waits for that print.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import { useKillHarness } from '../helpers/kill-harness.js';
import { auditList, signalledMidRefresh, startGds } from './refresh-kill-harness.js';

const used = useKillHarness({ template: false });

describe.each(['SIGTERM', 'SIGINT'] as const)(
  '%s while tokens refresh --save-profile waits for the answer',
  (signal) => {
    it('saves the rotated tokens before exiting, and the profile works', async () => {
      const issued = await used.harness.server.issueToken('OWNER', {
        name: `save-${signal}`,
        env: 'dev',
        scopes: ['workspace:read:audit'],
      });
      const configDir = join(used.harness.dir, `save-${signal}`);
      // The service spends the token and answers; gds hears the answer only after the signal.
      const killed = await signalledMidRefresh(
        used.harness,
        issued.tokens.refreshToken,
        (env) =>
          startGds(
            [
              'tokens',
              'refresh',
              '--refresh-token',
              issued.tokens.refreshToken,
              '--save-profile',
              'ci',
              '--json',
            ],
            configDir,
            { SERVICE_API_URL: used.harness.proxyUrl, ...env },
          ),
        signal,
      );
      expect(killed.code, killed.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      const saved = JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')) as {
        profiles: { ci: { kind: string; refreshToken: string } };
      };
      expect(saved.profiles.ci.kind).toBe('integration');
      expect(saved.profiles.ci.refreshToken).not.toBe(issued.tokens.refreshToken);
      const after = await runInProcess(auditList, {
        env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' },
      });
      expect(after.code, after.stderr).toBe(0);
    }, 120_000);
  },
);

describe.each(['SIGTERM', 'SIGINT'] as const)(
  '%s while tokens refresh (no profile) waits for the answer',
  (signal) => {
    it('prints the rotated tokens before exiting, and they work', async () => {
      const issued = await used.harness.server.issueToken('OWNER', {
        name: `print-${signal}`,
        env: 'dev',
        scopes: ['workspace:read:audit'],
      });
      // The service spends the token and answers; gds hears the answer only after the signal.
      const killed = await signalledMidRefresh(
        used.harness,
        issued.tokens.refreshToken,
        (env) =>
          startGds(
            ['tokens', 'refresh', '--refresh-token', issued.tokens.refreshToken, '--json'],
            join(used.harness.dir, `print-${signal}`),
            { SERVICE_API_URL: used.harness.proxyUrl, ...env },
          ),
        signal,
      );
      expect(killed.code, killed.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      const printed = JSON.parse(killed.stdout.trim()) as { tokens: { refreshToken: string } };
      expect(printed.tokens.refreshToken).not.toBe(issued.tokens.refreshToken);
      // The printed refresh token is the live one: it renews once more.
      const again = await runInProcess(
        ['tokens', 'refresh', '--refresh-token', printed.tokens.refreshToken, '--json'],
        {
          env: {
            GDS_CONFIG_DIR: join(used.harness.dir, `print-${signal}`),
            SERVICE_API_URL: used.harness.server.url,
          },
        },
      );
      expect(again.code, again.stderr).toBe(0);
    }, 120_000);
  },
);
