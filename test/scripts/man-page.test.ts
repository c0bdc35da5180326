// gds(1) (scripts/man-page.ts): written from the command classes, so every visible command is on it with its
// usage, and roff's special characters in their texts are escaped.
import { describe, expect, it } from 'vitest';
import { manPage } from '../../scripts/man-page.js';
import { COMMANDS } from '../../src/commands/index.js';

const page = manPage(COMMANDS, {
  name: 'gds',
  version: '9.9.9',
  description: 'a client',
  date: '2026-11-29',
});

describe('gds(1)', () => {
  it('has the sections a manual page has', () => {
    expect(page).toMatch(
      /^\.TH GDS 1 "2026-11-29" "gds 9\.9\.9" "User Commands"\n\.SH NAME\ngds \\- a client\n/,
    );
    for (const section of [
      'SYNOPSIS',
      'DESCRIPTION',
      'COMMANDS',
      'EXIT STATUS',
      'ENVIRONMENT',
      'FILES',
      'SEE ALSO',
    ])
      expect(page).toContain(`\n.SH ${section}\n`);
  });

  it('lists every visible command with its usage, and no hidden one', () => {
    for (const [id, command] of Object.entries(COMMANDS)) {
      const usage = `.B gds ${id.split(':').join(' ').replaceAll('-', '\\-')}`;
      if (command.hidden === true) expect(page).not.toContain(`${usage}\n`);
      else expect(page).toMatch(new RegExp(`^${usage.replace(/[.\\]/g, (c) => `\\${c}`)}( [A-Z\\[]|$)`, 'm'));
    }
    expect(page).toContain('.B gds records export TABLE\n');
  });

  it('escapes what roff would read as a request or an escape', () => {
    const body = page.split('\n').filter((line) => !line.startsWith('.'));
    expect(body.filter((line) => /^['.]/.test(line))).toEqual([]);
    expect(body.join('\n')).not.toMatch(/(?<!\\)-/);
  });
});
