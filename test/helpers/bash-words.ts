// The words bash reads from a command line gds suggests (a value of the service's quoted by shellWord): a test
// pastes the line as a person would and compares the words with the values. In a UTF-8 locale, as a terminal's
// shell reads `$'\u…'`; in a folder of its own, where a word run as a command by mistake (an unquoted `;touch`)
// leaves its file, not in the checkout.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function bashWords(line: string): string[] {
  const out = execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], {
    encoding: 'utf8',
    cwd: mkdtempSync(join(tmpdir(), 'gds-bash-words-')),
    env: { ...process.env, LC_ALL: 'C.UTF-8' },
  });
  return out.split('\0').slice(0, -1);
}
