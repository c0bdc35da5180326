import * as jsdiff from 'diff';
import { describe, expect, it } from 'vitest';
import * as yaml from 'yaml';
import { checkSummary, diffGateTexts, GateYamlError } from '../../src/core/gate-diff.js';
import { declaresNothing } from '../../src/core/gate1/schema.js';

const libraries = { yaml, diff: jsdiff };

const original = `patternChecks:
  - name: email_format
    column: email
    regex: '^[^@]+@[^@]+$'
    severity: error
fieldOverrides:
  - field: email
    nullRate: { warn: 0.05, fail: 0.1 }
`;

// The same document: keys reordered, other quoting, block style, a comment, 0.10 for 0.1.
const reformatted = `# owned by the data team
fieldOverrides:
- nullRate:
    fail: 0.10
    warn: 0.05
  field: "email"
patternChecks:
- severity: error
  regex: "^[^@]+@[^@]+$"
  column: email
  name: email_format
`;

const side = (name: string, text: string) => ({ name, text });

describe('diffGateTexts, text mode', () => {
  it('finds no difference between equal texts', () => {
    expect(diffGateTexts(libraries, side('a', original), side('b', original), { semantic: false })).toEqual({
      identical: true,
      semantic: false,
      hunks: [],
      unified: '',
    });
  });

  it('gives a unified diff from before to after', () => {
    const after = original.replace('severity: error', 'severity: warn');
    const result = diffGateTexts(libraries, side('server', original), side('gate1.yml', after), {
      semantic: false,
    });
    expect(result.identical).toBe(false);
    expect(result.hunks).toHaveLength(1);
    expect(result.hunks[0]?.lines).toContain('-    severity: error');
    expect(result.hunks[0]?.lines).toContain('+    severity: warn');
    expect(result.unified.split('\n').slice(0, 3)).toEqual([
      '--- server',
      '+++ gate1.yml',
      '@@ -2,7 +2,7 @@',
    ]);
  });

  it('counts formatting as a difference', () => {
    expect(
      diffGateTexts(libraries, side('a', original), side('b', reformatted), { semantic: false }).identical,
    ).toBe(false);
  });
});

describe('diffGateTexts, semantic mode', () => {
  it('diffs from no lines when the before side declares nothing (a table with no gate1.yml yet)', () => {
    const result = diffGateTexts(libraries, side('t_42 (no gate1.yml yet)', ''), side('b', original), {
      semantic: true,
    });
    const lines = result.hunks.flatMap((h) => h.lines);
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.every((line) => line.startsWith('+'))).toBe(true);
    expect(result.unified).not.toMatch(/^-null$/m);
  });

  it('ignores key order, quoting, comments, layout and number spelling', () => {
    const result = diffGateTexts(libraries, side('a', original), side('b', reformatted), { semantic: true });
    expect(result).toMatchObject({ identical: true, semantic: true, hunks: [] });
  });

  it('still sees a changed value, and shows it in the normalised form', () => {
    const after = reformatted.replace('fail: 0.10', 'fail: 0.2');
    const result = diffGateTexts(libraries, side('a', original), side('b', after), { semantic: true });
    expect(result.identical).toBe(false);
    expect(result.hunks.flatMap((h) => h.lines)).toEqual(
      expect.arrayContaining(['-      fail: 0.1', '+      fail: 0.2']),
    );
  });

  it('keeps list order significant', () => {
    const two = 'patternChecks:\n  - name: a\n  - name: b\n';
    const swapped = 'patternChecks:\n  - name: b\n  - name: a\n';
    expect(diffGateTexts(libraries, side('a', two), side('b', swapped), { semantic: true }).identical).toBe(
      false,
    );
  });

  it('reports invalid YAML with the file and the 1-based position', () => {
    const broken = 'patternChecks:\n  - name: a\n  name: b\n';
    let error: unknown;
    try {
      diffGateTexts(libraries, side('ok.yml', original), side('broken.yml', broken), { semantic: true });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(GateYamlError);
    expect(error).toMatchObject({ source: 'broken.yml', line: 3, col: 1 });
    expect((error as Error).message).toMatch(
      /^broken\.yml:3:1: All mapping items must start at the same column/,
    );
  });

  it('refuses duplicate keys rather than silently keeping one', () => {
    expect(() =>
      diffGateTexts(libraries, side('a', 'x: 1\nx: 2\n'), side('b', 'x: 2\n'), { semantic: true }),
    ).toThrow(/^a:2:1: Map keys must be unique/);
  });
});

describe('diffGateTexts compares by check first, and bounds the line diff', () => {
  const check = (i: number, severity = 'WARN') =>
    `  - name: check_${String(i).padStart(5, '0')}\n    column: email\n    regex: ^[a-z]+$\n    severity: ${severity}\n`;
  const many = (order: number[], edit?: (i: number) => string) =>
    `# gate1.yml\npatternChecks:\n${order.map((i) => edit?.(i) ?? check(i)).join('')}`;
  const ids = Array.from({ length: 10_000 }, (_, i) => i);

  it('10,000 reordered checks: all but one moved, nothing else; one hunk that turns before into after', () => {
    const before = many(ids);
    const after = many([...ids].reverse());
    const result = diffGateTexts(libraries, side('a', before), side('b', after), { semantic: false });
    expect(result.identical).toBe(false);
    expect(result.coarse).toBe(true);
    expect(result.checks).toMatchObject({ added: [], removed: [], changed: [] });
    expect(result.checks?.moved).toHaveLength(9_999);
    expect(result.hunks).toHaveLength(1);
    expect(jsdiff.applyPatch(before, result.unified)).toBe(after);
  });

  it('names the added, removed and changed checks, and keeps the shortest diff when few lines differ', () => {
    const before = many([1, 2, 3, 4, 5]);
    const after = many([1, 2, 4, 5, 6], (i) => (i === 4 ? check(4, 'HARD_FAIL') : undefined) as string);
    const result = diffGateTexts(libraries, side('a', before), side('b', after), { semantic: false });
    expect(result.coarse).toBeUndefined();
    expect(result.checks).toEqual({
      added: [{ section: 'patternChecks', name: 'check_00006' }],
      removed: [{ section: 'patternChecks', name: 'check_00003' }],
      changed: [{ section: 'patternChecks', name: 'check_00004' }],
      moved: [],
    });
    expect(jsdiff.applyPatch(before, result.unified)).toBe(after);
    expect(checkSummary(result)).toBeUndefined(); // the unified diff says it all
    const moved = diffGateTexts(libraries, side('a', many([1, 2, 3, 4])), side('b', many([2, 1, 3, 5])), {
      semantic: false,
    });
    expect(checkSummary(moved)).toBe('By check: added check_00005; removed check_00004; moved check_00002.');
  });

  it('in semantic mode too: reordered checks are a difference, reported as moved', () => {
    const result = diffGateTexts(libraries, side('a', many([1, 2, 3])), side('b', many([3, 1, 2])), {
      semantic: true,
    });
    expect(result.identical).toBe(false);
    expect(result.checks?.moved).toEqual([{ section: 'patternChecks', name: 'check_00003' }]);
  });

  it('a spanning hunk keeps a missing newline at the end right', () => {
    const before = many(ids.slice(0, 2_000));
    const after = `${many([...ids.slice(0, 2_000)].reverse()).trimEnd()}`;
    const result = diffGateTexts(libraries, side('a', before), side('b', after), { semantic: false });
    expect(result.coarse).toBe(true);
    expect(jsdiff.applyPatch(before, result.unified)).toBe(after);
  });

  it('reads no checks from a flow-style list, and still diffs the lines', () => {
    const result = diffGateTexts(
      libraries,
      side('a', 'patternChecks: [{name: a, column: c, regex: x, severity: WARN}]\n'),
      side('b', 'patternChecks: [{name: a, column: c, regex: y, severity: WARN}]\n'),
      { semantic: false },
    );
    expect(result.checks).toBeUndefined();
    expect(result.hunks).toHaveLength(1);
  });
});

describe('declaresNothing', () => {
  it('reads blank lines, comments and document markers as nothing, whatever the line endings', () => {
    for (const text of [
      '',
      '\n',
      '# only a comment\n',
      '# only a comment\r\n',
      '---\r\n# c\r\n...\r\n',
      '# a\r# b',
    ])
      expect(declaresNothing(text), JSON.stringify(text)).toBe(true);
    for (const text of ['{}', 'patternChecks: []\r\n', '# c\r\npatternChecks: []'])
      expect(declaresNothing(text), JSON.stringify(text)).toBe(false);
  });
});
