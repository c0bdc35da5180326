// gds(1) and a page per command (scripts/man-page.ts): written from the command classes, so every visible command
// is on gds(1) with its usage and has a page of its own with every flag, and roff's special characters in their
// texts are escaped; man reads every page without a warning (lintian fails the .deb on one).
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { manPage, manPages } from '../../scripts/man-page.js';
import { COMMANDS } from '../../src/commands/index.js';
import { needs, onPath } from '../helpers/skip.js';

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

describe('a page per command', () => {
  const pages = manPages(COMMANDS, {
    name: 'gds',
    version: '9.9.9',
    description: 'a client',
    date: '2026-11-29',
  });
  const visible = Object.entries(COMMANDS).filter(([, command]) => command.hidden !== true);

  it('is written for every visible command, and gds(1) names each in SEE ALSO', () => {
    expect([...pages.keys()].sort()).toEqual(
      ['gds.1', ...visible.map(([id]) => `gds-${id.split(':').join('-')}.1`)].sort(),
    );
    expect(pages.get('gds.1')).toContain('\n.BR gds\\-gate\\-run (1),\n');
  });

  it("holds the command's usage, every flag with its short form and values, and its examples", () => {
    const page = pages.get('gds-list.1') ?? '';
    expect(page).toMatch(/^\.TH GDS-LIST 1 "2026-11-29" "gds 9\.9\.9" "User Commands"\n/);
    expect(page).toContain('\n.SH NAME\ngds\\-list \\- List the governed tables of your workspace.\n');
    expect(page).toContain('\n.SH SYNOPSIS\n.B gds list\n');
    expect(page).toContain('\n\\fB\\-L\\fR, \\fB\\-\\-limit\\fR \\fILIMIT\\fR\n');
    expect(page).toContain('\\fB\\-\\-state\\fR \\fIQUARANTINED|\\:PENDING_REVIEW');
    expect(page).toContain('\n\\fBgds list \\-\\-state CERTIFIED \\-\\-json | jq \\-r .id\\fR\n');
    for (const [id, command] of visible) {
      const own = pages.get(`gds-${id.split(':').join('-')}.1`) ?? '';
      for (const [name, flag] of Object.entries(command.flags ?? {}))
        if (flag.hidden !== true)
          expect(own, `${id} --${name}`).toContain(`\\fB\\-\\-${name.replaceAll('-', '\\-')}\\fR`);
    }
  });

  const man = onPath('man');
  it(
    'is read by man without a warning, every page',
    needs(man === undefined ? 'no man on this machine (apt-get install man-db)' : undefined),
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'gds-man-'));
      try {
        const warnings: string[] = [];
        for (const [name, page] of pages) {
          await writeFile(join(dir, name), page);
          const read = spawnSync(
            man ?? 'man',
            ['--warnings', '-E', 'UTF-8', '-l', '-Tutf8', '-Z', join(dir, name)],
            {
              env: { ...process.env, MANWIDTH: '80' },
              encoding: 'utf8',
            },
          );
          expect(read.status, name).toBe(0);
          if (read.stderr.trim() !== '') warnings.push(`${name}: ${read.stderr.trim()}`);
        }
        expect(warnings).toEqual([]);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    },
  );
});
