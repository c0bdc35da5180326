// The stored profiles as choices of a picker (auth switch, auth logout): name, base, user and kind on one
// line, the active one marked, fitted to the terminal's width by the tables' rules (table.ts): the name and
// the kind are never cut; the base and the user shrink first (`https://gds.exa…`), so no line wraps.
import { loadConfig } from '../auth/config.js';
import type { Choice } from './prompt.js';
import { alignedRows } from './table.js';

const kinds = { static: 'CLI token', session: 'browser sign-in', integration: 'integration token' } as const;

/** What the picker puts before each line: its cursor (`❯ `). */
const CURSOR_WIDTH = 2;

export async function profileChoices(
  names: readonly string[],
  width: number = process.stderr.columns || 80,
): Promise<Array<Choice<string>>> {
  const config = await loadConfig();
  const cells = names.map((name) => {
    const profile = config.profiles[name];
    return [
      name,
      profile?.base ?? '',
      profile?.user ?? '-',
      profile === undefined ? '' : kinds[profile.kind],
      name === config.activeProfile ? '(active)' : '',
    ];
  });
  // The last column of the terminal is left free: a line that fills it wraps on some terminals.
  const { rows } = await alignedRows(['', '', '', '', ''], cells, Math.max(20, width - CURSOR_WIDTH - 1), [
    { shrinks: false, value: 100 },
    { shrinks: true, value: 20 },
    { shrinks: true, value: 10 },
    { shrinks: false, value: 40 },
    { shrinks: false, value: 60 },
  ]);
  // Once picked, the question is answered with the name alone: the whole row would wrap after `? Which profile?`.
  return names.map((name, i) => ({ value: name, name: rows[i] ?? name, short: name }));
}
