// docs/gh-comparison.md: the last line of its Counts table is what its rows say (each row's verdict, the
// part after `→` where it changed), so a row added or a verdict changed without the totals fails here; and
// the rows still worse come first in their table, as the page says.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../cli/helpers/cli-process.js';

const page = readFileSync(join(repoRoot, 'docs/gh-comparison.md'), 'utf8');
/** A table row's cells, `\|` inside a cell kept. */
const cells = (line: string) =>
  line
    .split(/(?<!\\)\|/)
    .slice(1, -1)
    .map((cell) => cell.trim());
const rows = page
  .split('\n')
  .filter((line) => /^\| [A-Z]+\d+ \|/.test(line))
  .map((line) => {
    const [id = '', , , , verdict = ''] = cells(line);
    return { id, verdict: verdict.split('→').at(-1)?.trim() ?? '' };
  });

describe('docs/gh-comparison.md', () => {
  it('has one row per id, each with a known verdict', () => {
    expect(new Set(rows.map((row) => row.id)).size).toBe(rows.length);
    for (const row of rows)
      expect(['better', 'same', 'worse', 'by spec', 'missing'], row.id).toContain(row.verdict);
  });

  it("its Counts table's last line is the tally of the rows", () => {
    const counts = page.slice(
      page.indexOf('## Counts'),
      page.indexOf('\n## ', page.indexOf('## Counts') + 1),
    );
    const last = counts
      .split('\n')
      .filter((line) => line.startsWith('| ') && !line.startsWith('| |'))
      .at(-1);
    const [, better, same, worse, bySpec, missing, total] = cells(last ?? '');
    const tally = (verdict: string) => String(rows.filter((row) => row.verdict === verdict).length);
    expect({ better, same, worse, bySpec, missing, total }).toEqual({
      better: tally('better'),
      same: tally('same'),
      worse: tally('worse'),
      bySpec: tally('by spec'),
      missing: tally('missing'),
      total: String(rows.length),
    });
  });

  it('lists the rows still worse first in their table', () => {
    for (const table of page.split('\n## ')) {
      const verdicts = rows.filter((row) => table.includes(`\n| ${row.id} |`)).map((row) => row.verdict);
      const firstOther = verdicts.findIndex((verdict) => verdict !== 'worse' && verdict !== 'missing');
      if (firstOther !== -1) expect(verdicts.slice(firstOther)).not.toContain('worse');
    }
  });
});
