// The gate1.yml gds writes from dbt tests is printed without the yaml package's document (gate1-text.ts): it must
// be the yaml package's text byte for byte (the service compares texts, and a plan of an applied project must
// find the same text it wrote before), or leave the document to the yaml package.
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import type { CommentedItem } from '../../../src/core/dbt/gate1-text.js';
import { gate1Text, gate1TextWithYaml, printGate1 } from '../../../src/core/dbt/gate1-text.js';
import { declareDbtProject, prepareDbtReader } from '../../../src/core/dbt/project.js';
import { generateDbtProject } from '../../../scripts/bench/dbt-manifest.js';

const STRINGS = [
  'plain_name',
  'CamelCase2',
  'with space',
  'a: b',
  'a:b',
  'key:',
  'a #b',
  '#x',
  '- x',
  '-',
  "'q'",
  '"dq"',
  "x'y",
  '',
  ' lead',
  'trail ',
  'null',
  'Null',
  'NULL',
  'true',
  'False',
  'yes',
  'no',
  'on',
  'off',
  'y',
  '~',
  '123',
  '1.5',
  '.5',
  '0x1F',
  '0o7',
  '1e3',
  '+1',
  '-1',
  '.inf',
  '-.inf',
  '.nan',
  'NaN',
  '2026-01-01',
  '@at',
  '`tick',
  '%pct',
  '!bang',
  '&amp',
  '*star',
  '{brace}',
  '[bracket]',
  'a,b',
  '?q',
  ': c',
  '|pipe',
  '>gt',
  '=eq',
  '<<',
  'ünïcode',
  'emoji 😀',
  'tab\there',
  'back\\slash',
  '\u0007bell',
  'line\u2028sep',
  'next\u0085line',
  'del\u007f',
  'bom\ufeff',
  'multi\nline',
  "status IN ('placed', 'shipped', 'returned')",
  'amount >= 0 AND amount <= 100000',
  "email ~ '^[^@]+@[^@]+$'",
  '^[A-Z]{2}-\\d+$',
];
const NUMBERS = [0, 1, 0.5, -3, 100000, 1e21, 0.1 + 0.2, 2 ** 60, Number.NaN, -0];
const COMMENTS = [undefined, ' dbt test test.shop.unique_x.abc', ' x # y', '', ' multi\nline', ' 😀'];

function lists(s: string, n: number, comment: string | undefined): Array<[string, CommentedItem[]]> {
  return [
    ['patternChecks', [{ value: { name: s, column: 'c', regex: s, severity: 'HARD_FAIL' }, comment }]],
    ['customPredicates', [{ value: { name: 'p', sql: s, severity: 'WARN' } }]],
    ['uniqueChecks', [{ value: { name: 'u', columns: [s, 'b'], severity: 'HARD_FAIL' }, comment }]],
    ['fieldOverrides', [{ value: { field: s, nullRate: { warn: n, fail: 1 } }, comment }]],
  ];
}

describe('gate1.yml printed from dbt tests', () => {
  it('is the yaml package’s text, byte for byte, whenever it prints it alone', () => {
    let printed = 0;
    for (const s of STRINGS)
      for (const n of NUMBERS)
        for (const comment of COMMENTS) {
          const input = lists(s, n, comment);
          const fast = gate1Text(yaml, ' gate1.yml of dbt model model.shop.x, written by gds', input);
          const slow = gate1TextWithYaml(yaml, ' gate1.yml of dbt model model.shop.x, written by gds', input);
          if (fast !== undefined) {
            printed += 1;
            expect(fast, JSON.stringify({ s, n, comment })).toBe(slow);
          }
          expect(printGate1(yaml, ' gate1.yml of dbt model model.shop.x, written by gds', input)).toBe(slow);
        }
    // Many (all the usual ones) are printed without the yaml package’s document.
    expect(printed).toBeGreaterThan((STRINGS.length * NUMBERS.length * COMMENTS.length) / 3);
  });

  it('prints the usual dbt tests alone: names, SQL predicates, 0/1 null rates, one-line comments', () => {
    const input = lists("status IN ('placed', 'shipped')", 0, ' dbt test test.shop.accepted_values_x.abc');
    expect(gate1Text(yaml, ' header', input)).toBeDefined();
  });

  it('writes the gate1.yml of every model of a generated project as the yaml package does', async () => {
    const dbtReader = await prepareDbtReader();
    const { manifest, catalog } = generateDbtProject(120);
    const project = declareDbtProject({ manifest, catalog }, {}, dbtReader);
    const written = project.declarations.filter((d) => d.gate1Yaml !== undefined);
    expect(written.length).toBeGreaterThan(100);
    for (const d of written) {
      const text = d.gate1Yaml ?? '';
      expect(text).toMatch(/^# gate1\.yml of dbt \w+ \S+, written by gds from its dbt tests\n\n/);
      // The value the yaml package reads back is printed by it to the same text.
      const value = yaml.parse(text) as Record<string, Array<Record<string, never>>>;
      const comments = [...text.matchAll(/^ {2}#(.*)\n {2}- /gm)].map((m) => m[1]);
      let at = 0;
      const again = gate1TextWithYaml(
        yaml,
        text.split('\n', 1)[0]?.slice(1) ?? '',
        Object.entries(value).map(([key, items]) => [
          key,
          items.map((item) => ({ value: item, comment: comments[at++] })),
        ]),
      );
      expect(again).toBe(text);
    }
  });
});
