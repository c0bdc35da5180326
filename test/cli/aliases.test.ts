// Alias expansion (src/cli/aliases.ts) word by word, the dispatcher's test of a first word
// (command-route.ts mayBeAlias): which first words are tried as an alias at all.
import { describe, expect, it } from 'vitest';
import { expandAlias, splitWords } from '../../src/cli/aliases.js';
import { mayBeAlias } from '../../src/cli/command-route.js';
import { COMMAND_LOADERS } from '../../src/commands/loaders.js';

describe('splitWords', () => {
  it.each([
    ['list --state CERTIFIED', ['list', '--state', 'CERTIFIED']],
    ['  list   -L 2 ', ['list', '-L', '2']],
    [`status "a b" 'c d' e\\ f`, ['status', 'a b', 'c d', 'e f']],
    [`api --jq '.a | .b' ""`, ['api', '--jq', '.a | .b', '']],
    [`x "say \\"hi\\" \\\\ \\$1"`, ['x', 'say "hi" \\ $1']],
    [`--name="$1"`, ['--name=$1']],
  ])('%s', (text, words) => {
    expect(splitWords(text)).toEqual(words);
  });

  it('an unclosed quote is exit 2', () => {
    expect(() => splitWords(`list --jq '.a`)).toThrow(/unclosed ' quote/);
  });
});

describe('expandAlias', () => {
  const aliases = {
    ls: 'list --state CERTIFIED',
    why: 'status $1 --json',
    two: 'gate diff -f $2 --against $1',
    sh: '!echo "$1"',
  };

  it('appends the arguments when there is no placeholder', () => {
    expect(expandAlias(['ls', '--json', '-L', '3'], aliases)).toEqual({
      kind: 'command',
      argv: ['list', '--state', 'CERTIFIED', '--json', '-L', '3'],
    });
  });

  it('puts arguments in their placeholders, whole, and appends those after the highest', () => {
    expect(expandAlias(['why', 'a b; c', '-q', '.id'], aliases)).toEqual({
      kind: 'command',
      argv: ['status', 'a b; c', '--json', '-q', '.id'],
    });
    expect(expandAlias(['two', 'old.yml', 'new.yml', '--semantic'], aliases)).toEqual({
      kind: 'command',
      argv: ['gate', 'diff', '-f', 'new.yml', '--against', 'old.yml', '--semantic'],
    });
  });

  it('too few arguments: exit 2 naming how many', () => {
    expect(() => expandAlias(['two', 'x'], aliases)).toThrow('The alias two needs 2 arguments, and got 1.');
  });

  it('a shell alias keeps its script and its arguments apart; no alias: undefined', () => {
    expect(expandAlias(['sh', '$(id)'], aliases)).toEqual({
      kind: 'shell',
      script: 'echo "$1"',
      args: ['$(id)'],
    });
    expect(expandAlias(['nope'], aliases)).toBeUndefined();
    expect(expandAlias(['constructor'], aliases)).toBeUndefined();
  });
});

describe('mayBeAlias: only a word that names no command or topic', () => {
  const ids = Object.keys(COMMAND_LOADERS);
  it.each([
    ['ls', true],
    ['list', false],
    ['gate', false],
    ['help', false],
    ['version', false],
    ['--json', false],
    ['-h', false],
    [undefined, false],
  ])('%s: %s', (word, expected) => {
    expect(mayBeAlias(word, ids)).toBe(expected);
  });
});
