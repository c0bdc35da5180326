// gate diff --semantic reads and prints a gate1.yml check by check (normaliseByCheck), each distinct check
// once for both sides. It must give normaliseGateYaml's text exactly, or leave the text to it.
import * as jsdiff from 'diff';
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import {
  diffGateTexts,
  GateYamlError,
  normaliseByCheck,
  normaliseGateYaml,
} from '../../src/core/gate-diff.js';

const libraries = { yaml, diff: jsdiff };

/** Check items as people write them: every kind of scalar, nesting, comments, blank lines. */
const ITEMS = [
  '  - name: plain\n    column: email\n    regex: ^[a-z]+$\n    severity: WARN',
  "  - severity: BLOCK\n    name: \"double quoted \\t \\u00e9 \\\" x\"\n    column: 'single '' quoted'",
  '  - name: numbers\n    min: 1\n    max: 2.50\n    hex: 0x1F\n    octal: 0o17\n    exp: 1e3\n    inf: .inf\n    neg: -0',
  '  - name: scalars\n    a: true\n    b: False\n    c: null\n    d: ~\n    e:\n    f: "true"\n    g: yes\n    h: 010',
  '  - name: block\n    description: |\n      first line\n\n      after a blank line\n    folded: >-\n      folded\n      text\n',
  '  - name: nested # a comment\n    # a comment line\n    values:\n      - a\n      - 1\n      - {x: 1, y: [2, 3]}\n    map:\n      z: 1\n      a: 2',
  '  - name: "quoted: colon"\n    column: "a # not a comment"\n    regex: \'^\\d{3}-\\d{4}$\'',
  '  - name: unicode ✓ é 😀\n    column: naïve',
  '  -   name: spaced\n      column: c',
  '  - name: empty_string\n    value: ""\n    list: []\n    map: {}',
  '  - name: dup_ish\n    Name: other\n    NAME: third',
  '  - name: long\n    regex: ' + 'x'.repeat(300),
  '  - name: multiline plain\n    description: this plain text\n      goes on here',
  '  - name: key with spaces\n    "odd key": 1\n    ? complex\n    : value',
];

const FRAMES: Array<(sections: Record<string, string>) => string> = [
  (s) => `patternChecks:\n${s.patternChecks}\n`,
  (s) =>
    `version: 1\ntable: orders\npatternChecks:\n${s.patternChecks}\ncustomPredicates:\n${s.customPredicates}\n`,
  (s) =>
    `# leading comment\ncustomPredicates:\n${s.customPredicates}\n\npatternChecks:\n  # before the first\n${s.patternChecks}\n\nfieldOverrides:\n${s.fieldOverrides}\nzeta: last\nalpha:\n  nested: true\n  list: [1, 2]\n`,
  (s) => `patternChecks:\n${s.patternChecks}\nfieldOverrides: []\ncustomPredicates:\nother: ~\n`,
  (s) => `uniqueChecks:\n${s.customPredicates}\npatternChecks:\n${s.patternChecks}\n`,
  (s) =>
    `description: |\n  text with\n\n  blank lines\npatternChecks:\n\n${s.patternChecks}\n\n# trailing comment\n`,
];

const FIELD_ITEMS = [
  '  - field: email\n    required: true',
  '  - field: "quoted field"\n    min: 3\n    allowed: [a, b]',
  '  - field: amount\n    max: 10.5\n    note: |\n      kept\n',
];

function sample(seed: number): string {
  const pick = (list: string[], count: number) =>
    Array.from({ length: count }, (_, i) => list[(seed * 5 + i * 3) % list.length] ?? '').map((item, i) =>
      item.replace(/name: (["']?)/, `name: $1n${i}_`),
    );
  const frame = FRAMES[seed % FRAMES.length] ?? FRAMES[0];
  return frame!({
    patternChecks: pick(ITEMS, 2 + (seed % 9)).join(seed % 2 === 0 ? '\n' : '\n\n'),
    customPredicates: pick(ITEMS, 1 + (seed % 4)).join('\n'),
    fieldOverrides: pick(FIELD_ITEMS, 1 + (seed % 3)).join('\n'),
  });
}

describe('normaliseByCheck', () => {
  it('gives normaliseGateYaml’s text on every generated gate1.yml it reads', () => {
    let read = 0;
    for (let seed = 0; seed < 300; seed++) {
      const text = sample(seed);
      const full = normaliseGateYaml(yaml, { name: 'a', text });
      const byCheck = normaliseByCheck(yaml, text, new Map());
      if (byCheck === undefined) continue;
      read += 1;
      expect(byCheck, text).toBe(full);
    }
    // Most of them are read check by check: the comparison is not vacuous.
    expect(read).toBeGreaterThan(250);
  });

  it('reads each distinct check once for both sides, and answers the same', () => {
    const printed = new Map<string, string | null>();
    const before = sample(7);
    const after = sample(7).replace('severity: WARN', 'severity: BLOCK');
    expect(normaliseByCheck(yaml, before, printed)).toBe(
      normaliseGateYaml(yaml, { name: 'a', text: before }),
    );
    const distinct = printed.size;
    expect(normaliseByCheck(yaml, after, printed)).toBe(normaliseGateYaml(yaml, { name: 'b', text: after }));
    expect(printed.size).toBe(distinct + 1);
  });

  it('leaves to normaliseGateYaml what a check read alone could mean otherwise', () => {
    const base = 'patternChecks:\n  - name: a\n    column: x\n';
    for (const text of [
      `${base}  - name: b\n    column: &anchor y\n  - name: c\n    column: *anchor\n`,
      `defaults: &d\n  severity: WARN\n${base}  - name: b\n    <<: *d\n`,
      `${base}  - name: b\n    column: !!str 1\n`,
      `%YAML 1.1\n---\n${base}`,
      `---\n${base}---\nother: doc\n`,
      `${base}\tcolumn: tab\n`,
      base.replaceAll('\n', '\r\n'),
      'patternChecks: [{name: a}]\n',
      'patternChecks: []\n',
      'version: 1\n',
      `${base}  - name: b\n  column: less indented\n`,
      `patternChecks: []\n  - name: a\n`,
      `${base}patternChecks:\n  - name: twice\n`,
      `${base}  - name: [unclosed\n`,
    ]) {
      expect(normaliseByCheck(yaml, text, new Map()), JSON.stringify(text)).toBeUndefined();
    }
  });

  it('never reads a text check by check that normaliseGateYaml refuses', () => {
    for (const text of [
      'patternChecks:\n  - name: a\n    column: x\n     bad: indent\n',
      'patternChecks:\n  - name: a\n    name: duplicate key\n',
      'patternChecks:\n  - name: "unclosed\n',
      'patternChecks:\n  - name: a\nversion: 1\nversion: 2\n',
      'patternChecks:\n  - name: a\n    column: x\n  - : \n    - ]\n',
    ]) {
      expect(() => normaliseGateYaml(yaml, { name: 'a', text }), text).toThrow(GateYamlError);
      expect(normaliseByCheck(yaml, text, new Map()), JSON.stringify(text)).toBeUndefined();
      expect(() =>
        diffGateTexts(
          libraries,
          { name: 'ok', text: 'patternChecks: []\n' },
          { name: 'bad', text },
          { semantic: true },
        ),
      ).toThrow(GateYamlError);
    }
  });

  it('diffs 2,000 reordered checks as the whole-document normalisation does', () => {
    const check = (i: number) =>
      `  - name: check_${String(i).padStart(5, '0')}\n    column: email\n    regex: ^[a-z]+$\n    severity: WARN\n`;
    const ids = Array.from({ length: 2_000 }, (_, i) => i);
    const before = `patternChecks:\n${ids.map(check).join('')}`;
    const after = `patternChecks:\n${[...ids].reverse().map(check).join('')}`;
    const printed = new Map<string, string | null>();
    expect(normaliseByCheck(yaml, before, printed)).toBe(
      normaliseGateYaml(yaml, { name: 'a', text: before }),
    );
    expect(normaliseByCheck(yaml, after, printed)).toBe(normaliseGateYaml(yaml, { name: 'b', text: after }));
    expect(printed.size).toBe(2_000);
    const diff = diffGateTexts(
      libraries,
      { name: 'a', text: before },
      { name: 'b', text: after },
      { semantic: true },
    );
    expect(diff.identical).toBe(false);
    expect(diff.checks?.moved).toHaveLength(1_999);
  });
});
