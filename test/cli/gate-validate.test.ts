// `gds gate validate` run as bin/run.js runs it, in the test process (runInProcess): exit codes, stdout vs
// stderr, stdin, --json.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';

const valid = `patternChecks:
  - name: email_format
    column: email
    regex: '^[^@]+@[^@]+$'
    severity: HARD_FAIL
customPredicates:
  - name: amount_positive
    sql: amount > 0
    severity: HARD_FAIL
fieldOverrides:
  - field: email
    nullRate: {warn: 0.01, fail: 0.05}
`;
const invalid = `customPredicates:
  - name: sleepy
    sql: amount > 0 AND pg_sleep(10) IS NULL
    severity: HARD_FAIL
  - name: sleepy
    sql: amount > 0; DROP TABLE orders
    severity: hard_fail
`;
const warningsOnly = `patternChecks:
  - name: draft_word
    column: title
    regex: '\\bdraft\\b'
    severity: WARN
`;
const hostile = `patternChecks:
  - name: x
    column: email
    regex: a
    severity: HARD_FAIL
    "evil\u001b[2J\u001b]0;owned\u0007": 1
`;

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-validate-'));
  await Promise.all([
    writeFile(file('valid.yml'), valid),
    writeFile(file('invalid.yml'), invalid),
    writeFile(file('warnings.yml'), warningsOnly),
    writeFile(file('hostile.yml'), hostile),
  ]);
});

function jsonLines(text: string): Array<Record<string, unknown>> {
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe('gds gate validate, human output', () => {
  it('exits 0 on a valid file, prints nothing on stdout and the verdict on stderr', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('valid.yml')]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`${file('valid.yml')}: valid\n`);
  });

  it('exits 2 on an invalid file, one compiler-style line per problem on stdout, the summary on stderr', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('invalid.yml')]);
    expect(r.code).toBe(2);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^${file('invalid.yml')}:3:25 error customPredicates\\[0\\]\\.sql: pg_sleep\\(\\) .*\\(sql-function-not-allowed\\)$`,
        ),
      ),
      expect.stringMatching(
        /:5:11 error customPredicates\[1\]\.name: the check name "sleepy" is already used at line 2 .*\(duplicate-name\)$/,
      ),
      expect.stringMatching(/:6:20 error customPredicates\[1\]\.sql: a semicolon .*\(sql-semicolon\)$/),
      expect.stringMatching(
        /:7:15 error customPredicates\[1\]\.severity: unknown severity "hard_fail" \(did you mean HARD_FAIL\?\).*\(schema-severity\)$/,
      ),
    ]);
    expect(r.stderr).toBe(`${file('invalid.yml')}: invalid, 4 errors\n`);
  });

  it('exits 0 when there are warnings only, and still shows them', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('warnings.yml')]);
    expect(r.code).toBe(0);
    expect(r.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(r.stdout).toMatch(/:4:13 warning patternChecks\[0\]\.regex: \\b means a backspace/);
    expect(r.stderr).toBe(`${file('warnings.yml')}: valid (2 warnings)\n`);
  });

  it('reads stdin with -f - and names it <stdin>', async () => {
    const ok = await runInProcess(['gate', 'validate', '-f', '-'], { input: valid });
    expect(ok.code).toBe(0);
    expect(ok.stderr).toBe('<stdin>: valid\n');
    const bad = await runInProcess(['gate', 'validate', '-f', '-'], { input: invalid });
    expect(bad.code).toBe(2);
    expect(bad.stdout).toMatch(/^<stdin>:3:25 error /);
  });

  it('strips terminal control characters that came from the file', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('hostile.yml')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/unknown key "evil/);
    expect(r.stdout).not.toMatch(/[\u001b\u0007]/);
  });

  it('exits 2 with an error on stderr and nothing on stdout when the file does not exist', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('missing.yml')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/No such file/);
  });

  it('exits 2 when -f is missing', async () => {
    const r = await runInProcess(['gate', 'validate']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/file/);
  });
});

describe('gds gate validate --json', () => {
  it('prints one diagnostic per line, then the summary line, all parsing; exit 2', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('invalid.yml'), '--json']);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('');
    const lines = jsonLines(r.stdout);
    expect(lines).toHaveLength(5);
    for (const d of lines.slice(0, 4)) {
      expect(d).toEqual({
        file: file('invalid.yml'),
        line: expect.any(Number),
        column: expect.any(Number),
        path: expect.stringMatching(/^customPredicates\[\d\]\./),
        severity: 'error',
        code: expect.stringMatching(/^[a-z-]+$/),
        message: expect.any(String),
      });
    }
    expect(lines[0]).toMatchObject({ line: 3, column: 25, code: 'sql-function-not-allowed' });
    expect(lines[4]).toEqual({ valid: false, file: file('invalid.yml'), errors: 4, warnings: 0 });
  });

  it('prints only the summary line for a valid file; exit 0', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', '-', '--json'], { input: valid });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(jsonLines(r.stdout)).toEqual([{ valid: true, file: '<stdin>', errors: 0, warnings: 0 }]);
  });

  it('keeps control characters escaped inside JSON strings', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('hostile.yml'), '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).not.toMatch(/[\u001b\u0007]/);
    const [first] = jsonLines(r.stdout);
    expect(first?.path).toBe('patternChecks[0].evil\u001b[2J\u001b]0;owned\u0007');
  });

  it('puts a read failure as one {"error"} line on stderr, nothing on stdout', async () => {
    const r = await runInProcess(['gate', 'validate', '-f', file('missing.yml'), '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(jsonLines(r.stderr)).toEqual([{ error: expect.objectContaining({ code: 'input_not_found' }) }]);
  });
});
