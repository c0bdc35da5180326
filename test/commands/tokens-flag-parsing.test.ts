// Flag parsing of `gds tokens list|revoke` and `gds auth revoke` apart from what they do (nothing is sent).
import { describe, expect, it } from 'vitest';
import AuthRevoke from '../../src/commands/auth/revoke.js';
import TokensList from '../../src/commands/tokens/list.js';
import TokensRevoke from '../../src/commands/tokens/revoke.js';
import { revocationTarget } from '../../src/services/tokens.js';
import { flagsOf, usageError } from './helpers/oclif-parse.js';

describe('tokens list', () => {
  it('lists integration tokens by default; --cli or --user lists CLI tokens', async () => {
    expect((await flagsOf(TokensList, [])).cli).toBeFalsy();
    expect(await flagsOf(TokensList, ['--cli', '--user', 'usr_1'])).toMatchObject({
      cli: true,
      user: 'usr_1',
    });
    expect(await flagsOf(TokensList, ['--user', 'usr_1'])).toMatchObject({ user: 'usr_1' });
    expect(await usageError(TokensList, ['--user'])).toContain('user');
  });
});

describe('tokens revoke', () => {
  it('takes exactly one token reference', async () => {
    expect(await usageError(TokensRevoke, [])).toContain('token');
    expect(await usageError(TokensRevoke, ['tf_a', 'tf_b'])).toContain('Unexpected argument: tf_b');
  });

  it('sends a clt_ id to the CLI token route, anything else to the integration one, and never a whole cli_ token', () => {
    expect(revocationTarget('clt_0f4c')).toBe('cli');
    expect(revocationTarget('tf_abc')).toBe('integration');
    expect(revocationTarget('itk_abc')).toBe('integration');
    expect(() => revocationTarget('cli_secret')).toThrow(/by its id/);
    expect(() => revocationTarget('  ')).toThrow(/Name the token/);
  });
});

describe('auth revoke', () => {
  it('takes no argument', async () => {
    expect(await usageError(AuthRevoke, ['extra'])).toContain('Unexpected argument: extra');
  });
});
