// shellWord: a value put into a command line gds prints for pasting is read back by a real shell as exactly
// that value, one word, whatever it holds (a cursor or id from the service with ;, $(…), quotes, spaces).
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/core/shell-word.js';
import { needs, onPath } from '../helpers/skip.js';

/** The words bash reads from `line`, each printed on its own NUL-terminated line. */
function bashWords(line: string): string[] {
  const out = execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' });
  return out.split('\0').slice(0, -1);
}

describe('shellWord', () => {
  it('leaves a plain word alone', () => {
    for (const word of ['tbl_42', 'eyJhZnRlciI6IjEwMCJ9', 'workspace:read:audit', 'a/b.c', 'k=v', 'x@y']) {
      expect(shellWord(word)).toBe(word);
    }
  });

  it.each([
    "abc'; touch /tmp/pwned #",
    '$(id)',
    '`id`',
    'a b\tc',
    "it's",
    '"quoted" \\ back',
    '*',
    '',
    'x\ny',
    '--flag',
  ])('%j comes back from bash as the same single word', (value) => {
    expect(bashWords(shellWord(value))).toEqual([value]);
  });

  // zsh (macOS's shell) reads a word that starts with `=` as the path of the command it names: `=ls` is
  // /bin/ls, and `=nosuch` an error that runs nothing.
  it(
    'a word starting with = comes back from zsh as that word',
    needs(onPath('zsh') ? undefined : 'no zsh (apt-get install zsh)'),
    () => {
      for (const value of ['=ls', '=nosuchcommand', '==']) {
        const out = execFileSync('zsh', ['-f', '-c', `printf '%s\\0' ${shellWord(value)}`], {
          encoding: 'utf8',
        });
        expect(out.split('\0').slice(0, -1)).toEqual([value]);
      }
    },
  );
});
