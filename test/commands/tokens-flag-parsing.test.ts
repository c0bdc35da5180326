// Flag parsing of `gds tokens list|revoke` and `gds auth revoke` apart from what they do (nothing is sent).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';
import AuthRevoke from '../../src/commands/auth/revoke.js';
import AuthTokenCreate from '../../src/commands/auth/token/create.js';
import TokensIssue from '../../src/commands/tokens/issue.js';
import TokensList from '../../src/commands/tokens/list.js';
import TokensRevoke from '../../src/commands/tokens/revoke.js';
import { MAX_TOKEN_NAME_CHARS } from '../../src/core/text-bounds.js';
import { parseBody } from '../../src/server/contract.js';
import { flagsOf, usageError } from './helpers/oclif-parse.js';

describe('tokens list', () => {
  it('lists every kind by default; --cli keeps CLI tokens, --user takes an e-mail, -L a count', async () => {
    expect((await flagsOf(TokensList, [])).cli).toBeFalsy();
    expect(await flagsOf(TokensList, ['--cli', '--user', 'admin@example.com'])).toMatchObject({
      cli: true,
      user: 'admin@example.com',
    });
    expect(await flagsOf(TokensList, ['--user', 'usr_1'])).toMatchObject({ user: 'usr_1' });
    expect(await usageError(TokensList, ['--user'])).toContain('user');
    expect(await flagsOf(TokensList, ['-L', '5'])).toMatchObject({ limit: 5 });
    expect(await usageError(TokensList, ['-L', '0'])).toMatch(/limit|1/);
  });
});

describe('tokens revoke', () => {
  it('takes exactly one token reference', async () => {
    expect(await usageError(TokensRevoke, [])).toContain('token');
    expect(await usageError(TokensRevoke, ['tf_a', 'tf_b'])).toContain('Unexpected argument: tf_b');
  });
});

describe('the tokens topic', () => {
  it('names every command it holds in its summary', () => {
    const pjson = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      oclif: { topics: Record<string, { description: string }> };
    };
    const summary = pjson.oclif.topics.tokens?.description ?? '';
    const commands = Object.keys(COMMAND_LOADERS)
      .filter((id) => id.startsWith('tokens:'))
      .map((id) => id.slice('tokens:'.length));
    expect(commands.length).toBeGreaterThanOrEqual(4);
    for (const command of commands) expect(summary).toMatch(new RegExp(`\\b${command}`));
  });
});

describe('auth revoke', () => {
  it('takes no argument', async () => {
    expect(await usageError(AuthRevoke, ['extra'])).toContain('Unexpected argument: extra');
  });
});

describe('a token’s --name', () => {
  // openapi.yaml: IssueTokenRequest.name and CreateCliTokenRequest.name are 1-200 characters.
  it.each([
    ['tokens issue', TokensIssue, ['--env', 'dev', '--scope', 'workspace:read:audit']],
    ['auth token create', AuthTokenCreate, []],
  ] as const)('%s: 200 characters are taken, 201 are exit 2 naming the limit', async (_, command, rest) => {
    const most = 'n'.repeat(MAX_TOKEN_NAME_CHARS);
    expect(await flagsOf(command, ['--name', most, ...rest])).toMatchObject({ name: most });
    expect(await usageError(command, ['--name', `${most}n`, ...rest])).toContain(
      '--name is 201 characters; at most 200 are kept.',
    );
  });
});

describe('a token’s --name is counted in characters, as the service counts it', () => {
  // The service checks the name against openapi.yaml's maxLength, which counts characters (code points):
  // a name of 200 emoji (400 UTF-16 units) is one it takes, so gds must not refuse it before sending.
  const emoji = '\u{1F680}';
  it.each([
    ['tokens issue', TokensIssue, ['--env', 'dev', '--scope', 'workspace:read:audit']],
    ['auth token create', AuthTokenCreate, []],
  ] as const)(
    '%s: 200 emoji are taken as the service takes them, 201 are exit 2',
    async (_, command, rest) => {
      const most = emoji.repeat(MAX_TOKEN_NAME_CHARS);
      const body = { name: most, env: 'dev', scopes: ['workspace:read:audit'] };
      expect(() => parseBody('IssueTokenRequest', body)).not.toThrow();
      expect(() => parseBody('CreateCliTokenRequest', { name: most })).not.toThrow();
      expect(await flagsOf(command, ['--name', most, ...rest])).toMatchObject({ name: most });
      expect(() => parseBody('CreateCliTokenRequest', { name: `${most}${emoji}` })).toThrow();
      expect(await usageError(command, ['--name', `${most}${emoji}`, ...rest])).toContain(
        '--name is 201 characters; at most 200 are kept.',
      );
    },
  );
});
