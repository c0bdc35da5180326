// An issued integration token whose answer could not be saved (the profile changed while the request was out) is
// named to revoke: the `gds tokens revoke ID` of the suggestion, pasted into a shell, names the service's very id.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashWords } from '../helpers/bash-words.js';
import { saveIntegrationTokens } from '../../src/auth/integration-profile.js';
import { setStaticProfile } from '../../src/auth/profiles.js';
import type { CliError } from '../../src/core/errors.js';

describe('an issued token not saved', () => {
  it.each(['itk_1;touch PWNED', 'itk_2 $(id)', 'itk_3\nForged: ok'])(
    'is named to revoke by an id %j that pastes back whole',
    async (id) => {
      const env = {
        GDS_CONFIG_DIR: join(await mkdtemp(join(tmpdir(), 'gds-unsaved-')), 'gds'),
        GDS_SECRET_STORAGE: 'file',
      };
      const tokens = {
        accessToken: 'b-access',
        refreshToken: 'b-refresh',
        expiresAt: '2099-01-01T00:00:00Z',
        refreshExpiresAt: '2099-01-01T00:00:00Z',
      };
      const failure = await saveIntegrationTokens(
        'b',
        async () => {
          // Another command saves profile b while the request is out: the answer is not saved over it.
          await setStaticProfile({ name: 'b', token: 'cli_bToken42', base: 'https://b.example' }, { env });
          return { base: 'https://b.example', tokens, id };
        },
        { force: true, env },
      ).then(
        () => undefined,
        (error: unknown) => error as CliError,
      );
      expect(failure).toMatchObject({ code: 'profile_changed' });
      const revoke = /End the token nothing can renew: gds tokens revoke (.*)\. Then issue/s.exec(
        failure?.suggestion ?? '',
      );
      expect(bashWords(revoke?.[1] ?? '')).toEqual([id]);
    },
  );
});
