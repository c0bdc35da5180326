// Commands gds prints for pasting carry the global flags the person gave, never a token.
import { describe, expect, it } from 'vitest';
import { pasteCommand } from '../../src/cli/paste-command.js';

describe('pasteCommand', () => {
  it('adds --profile and --base as given, each one shell word', () => {
    expect(pasteCommand('gds', ['records list t', '--cursor c'], {})).toBe('gds records list t --cursor c');
    expect(pasteCommand('gds', ['records list t'], { profile: 'loader', base: 'http://h:1/a b' })).toBe(
      "gds records list t --profile loader --base 'http://h:1/a b'",
    );
  });

  it('says a token is needed without printing it', () => {
    const line = pasteCommand('gds', ['records list t'], { token: 'cli_secret000' });
    expect(line).not.toContain('cli_secret');
    expect(line).toBe('gds records list t (add --token …: gds does not print tokens)');
  });
});
