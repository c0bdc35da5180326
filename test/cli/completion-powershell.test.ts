// PowerShell completion inserts a CompletionResult's first argument into the command line as it is: a name the
// service chose (a table `h my table`, `h$(x)`, "it's") must be one literal PowerShell word. pwsh is not
// installed here: what is checked is the word gds prints for it, read back by the rule of PowerShell's
// single-quoted strings (two quotes are one; ' ‘ ’ ‚ ‛ are all quotes), and the script's text. Whether
// PowerShell itself reads it so is not run.
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import { powershellWord, renderAnswer } from '../../src/cli/completion.js';
import { COMPLETION_SCRIPTS } from '../../src/cli/completion-scripts.js';

const QUOTES = "'\u2018\u2019\u201a\u201b";

/** A word as PowerShell reads it, for the two forms powershellWord writes (bare or single-quoted). */
function readBack(word: string): string[] {
  if (!word.startsWith("'")) return /[\s'"`$;,(){}@#|&<>*?[\]~%\u2018-\u201e]/.test(word) ? [] : [word];
  let text = '';
  for (let i = 1; i < word.length; i += 1) {
    const c = word[i] ?? '';
    if (!QUOTES.includes(c)) text += c;
    else if (i + 1 < word.length && QUOTES.includes(word[i + 1] ?? '')) {
      text += c;
      i += 1;
    } else return i === word.length - 1 ? [text] : [];
  }
  return [];
}

const HOSTILE = [
  'h my table',
  'h$(touch PWNED)',
  'h`touch PWNED`',
  'h;touch PWNED',
  `it's`,
  `h"q'uote''`,
  'h\u2019curly\u2018',
  'h,b',
  '@splat',
  '#comment',
  'h|x&y<z>',
  'h*',
  '~home',
  '--%',
  '-Dfoo.bar=baz',
  '1kb',
  '--help',
  '  ',
];

describe('powershellWord', () => {
  it.each(HOSTILE)('%s is one word that is the name', (name) => {
    expect(readBack(powershellWord(name))).toEqual([name]);
  });

  it('leaves commands, flags, enum values and ids as they are', () => {
    for (const word of ['status', '--table', '--state=CERTIFIED', 'CERTIFIED', '2', 'tbl_42', 'orders.v2'])
      expect(powershellWord(word)).toBe(word);
  });
});

describe('gds __complete powershell lines', () => {
  it('are the word to insert, the name, the description', () => {
    const out = renderAnswer(
      {
        kind: 'values',
        candidates: [{ value: 'h my table', description: 'tbl_1 dev' }, { value: 'orders' }],
      },
      'powershell',
    );
    expect(out).toBe("'h my table'\th my table\ttbl_1 dev\norders\torders\t\n");
  });
});

describe('the PowerShell script', () => {
  it('asks for the PowerShell words, and inserts the first field as it is', () => {
    const script = COMPLETION_SCRIPTS.powershell;
    expect(script).toContain(`& gds __complete powershell "--current=$wordToComplete" '--' @words`);
    expect(script).toContain(
      "[System.Management.Automation.CompletionResult]::new($parts[0], $parts[1], 'ParameterValue', $tip)",
    );
  });
});

describe('gds __complete powershell as the script runs it', () => {
  it('reads a --help on the line as a word of the line, not as a request for its own help', async () => {
    // what `gds list --help --st<TAB>` runs: --help is on the line already, --state is what may come
    const result = await runInProcess(
      ['__complete', 'powershell', '--current=--st', '--', 'list', '--help'],
      {
        env: { SERVICE_API_URL: 'http://127.0.0.1:9' },
      },
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect(result.stdout.split('\n').map((line) => line.split('\t')[0])).toContain('--state');
    expect(result.stdout).not.toMatch(/USAGE/);
  });
});
