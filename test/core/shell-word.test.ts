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

  // A name from the service with a line break or another control character: the suggested line stays one
  // line, and pasted (in a UTF-8 terminal, as bash and zsh read \u escapes) gives back the very name.
  const controlled = [
    'x\ny',
    "it's\r\nForged: ok",
    'esc\u001b[2J',
    'bell\u0007 and del\u007f',
    'nel\u0085 and c1\u009b',
    'sep\u2028par\u2029',
    'rtl\u202eevil',
    'tab\there \\ back',
    // a format character past U+FFFF (a tag), a digit after it: \u takes at most four hex digits
    'tag\u{E0041}1 after',
  ];
  const utf8 = { ...process.env, LC_ALL: 'C.UTF-8' };

  /** `value` as JSON with every character beyond ASCII escaped: a test's name that moves no cursor. */
  const named = (value: string) =>
    JSON.stringify(value).replace(
      /[^\x20-\x7e]/g,
      (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );

  it.each(controlled.map((value) => [named(value), value]))(
    '%s is one printable line that bash reads back as the same word',
    (_, value) => {
      const word = shellWord(value);
      expect(word).toMatch(/^[\x20-\x7e]+$/);
      const out = execFileSync('bash', ['-c', `printf '%s\\0' ${word}`], { encoding: 'utf8', env: utf8 });
      expect(out.split('\0').slice(0, -1)).toEqual([value]);
    },
  );

  it(
    'a word with control characters comes back from zsh as that word',
    needs(onPath('zsh') ? undefined : 'no zsh (apt-get install zsh)'),
    () => {
      for (const value of controlled) {
        const out = execFileSync('zsh', ['-f', '-c', `printf '%s\\0' ${shellWord(value)}`], {
          encoding: 'utf8',
          env: utf8,
        });
        expect(out.split('\0').slice(0, -1)).toEqual([value]);
      }
    },
  );
});
