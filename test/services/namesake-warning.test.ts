// The warning of a plan whose derived id another same-named project's tables hold in other schemas: it names a
// few with an --adopt each, and past ten says how many more, where an --adopt a table is no command to run.
import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bashWords } from '../helpers/bash-words.js';
import type { HeldTable } from '../../src/client/areas/tables.js';
import { namesakeReason, namesakeText } from '../../src/services/project-plan.js';

const held = (count: number) =>
  Array.from(
    { length: count },
    (_, i) =>
      ({
        name: `t_${String(i).padStart(4, '0')}`,
        source: `team_a.t_${i}`,
        project: 'jaffle@con_x',
      }) as HeldTable,
  );
const of = {
  env: 'dev',
  projectId: 'jaffle@con_x',
  projectName: 'jaffle',
  projectSchemas: new Set(['team_b']),
  declaredSchemas: new Set(['team_b']),
  ownTables: 0,
};

describe('namesakeText', () => {
  it('names up to ten tables, each with its --adopt', () => {
    const text = namesakeText(held(2), of);
    expect(text).toMatch(/^t_0000, t_0001 \(dev\) are recorded under jaffle@con_x/);
    expect(text).toContain('gds apply --adopt t_0000 --adopt t_0001 --prune');
    expect(text).toContain('write "project: jaffle.team_b@con_x" in gds.yml');
  });

  it('past ten, the first ten and how many more, and no --adopt of each', () => {
    const text = namesakeText(held(2_000), { ...of, ownTables: 3 });
    expect(text).toMatch(/^t_0000, .*, t_0009 and 1990 more \(gds list --json/);
    expect(text).not.toContain('t_0010');
    expect(text).not.toContain('--adopt t_');
    expect(text).toContain(
      "this project's 3 tables recorded under jaffle@con_x in team_b are then owned elsewhere",
    );
    expect(text).toContain('write "project: jaffle@con_x" in gds.yml');
  });

  it('proposes an id the service takes: the first schema where all would pass 200 characters, else none', () => {
    const many = new Set(Array.from({ length: 12 }, (_, i) => `analytics_schema_number_${i}`));
    const long = namesakeText(held(1), { ...of, projectSchemas: many, declaredSchemas: many });
    expect(long).toContain('write "project: jaffle.analytics_schema_number_0@con_x" in gds.yml');
    const none = namesakeText(held(1), { ...of, declaredSchemas: new Set() });
    expect(none).toContain('write an id of its own as "project: ID" in gds.yml');
    expect(none).not.toContain('jaffle.@');
  });

  it('quotes each name in its --adopt, so that the command pasted into a shell takes over those tables', () => {
    const names = ['Customer Orders', 'x;touch PWNED', "it's $(id)"];
    const text = namesakeText(
      names.map((name) => ({ name, source: 'team_a.t', project: 'jaffle@con_x' }) as HeldTable),
      of,
    );
    const line = /gds apply (.*) --prune \(/.exec(text)?.[1] ?? '';
    // the words bash reads from the pasted line
    const words = execFileSync('bash', ['-c', `printf '%s\\n' ${line}`], {
      encoding: 'utf8',
      cwd: mkdtempSync(join(tmpdir(), 'gds-namesake-')),
    });
    expect(words.split('\n').slice(0, -1)).toEqual([...names].sort().flatMap((name) => ['--adopt', name]));
  });

  it("quotes the name in a namesake's reason, so that its --adopt pasted takes over that table", () => {
    for (const name of ['Customer Orders', 'x;touch PWNED', "it's $(id)"]) {
      const row = { name, source: 'team_a.t', project: 'jaffle@con_x' } as HeldTable;
      const reason = namesakeReason(row, name, 'jaffle', new Set(['team_b']));
      const word = /pass --adopt (.*) to take it over/.exec(reason)?.[1] ?? '';
      expect(bashWords(word)).toEqual([name]);
    }
  });
});
