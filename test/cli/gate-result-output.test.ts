// `gate result` (and gate status/cancel) render a finished job's checks as the table `gate run` prints,
// a failed check whose severity only warns reading WARN, not FAIL.
import { describe, expect, it } from 'vitest';
import { printJob } from '../../src/cli/gate-output.js';
import { Output } from '../../src/cli/output.js';
import type { GateJobBody } from '../../src/contract/types.js';

function capture(json = false) {
  const stdout = { text: '', write: (c: string) => ((stdout.text += c), true) };
  const stderr = { text: '', write: (c: string) => ((stderr.text += c), true) };
  return { out: new Output({ json, stdout, stderr, env: {} }), stdout, stderr };
}

const job: GateJobBody = {
  id: 'job_1',
  tableId: 't_1',
  type: 'gate2',
  gate: 2,
  status: 'SUCCEEDED',
  params: {},
  createdBy: 'usr_1',
  createdByEmail: 'owner@example.com',
  createdAt: '2026-01-01T00:00:00.000Z',
  startedAt: '2026-01-01T00:00:01.000Z',
  finishedAt: '2026-01-01T00:00:02.000Z',
  error: null,
  result: {
    gate: 2,
    passed: false,
    checks: [
      { name: 'columns_present', severity: 'FAIL', passed: false, detail: 'Column x is gone.' },
      { name: 'unregistered_columns', severity: 'WARN', passed: false, detail: 'Column y is new.' },
      { name: 'column_types', severity: 'FAIL', passed: true, detail: 'Types match.' },
    ],
  },
};

describe('printJob', () => {
  it('a checks table, WARN as WARN, then the verdict; piped: tab-separated rows', async () => {
    const { out, stdout } = capture();
    await printJob(out, job);
    const lines = stdout.text.split('\n');
    expect(lines).toContain('columns_present\tFAIL\tFAIL\tColumn x is gone.');
    expect(lines).toContain('unregistered_columns\tWARN\tWARN\tColumn y is new.');
    expect(lines).toContain('column_types\tFAIL\tpass\tTypes match.');
    expect(lines).toContain('Gate 2 FAILED on t_1.');
    expect(lines).toContain('Created 2026-01-01T00:00:00.000Z by owner@example.com');
    expect(stdout.text).not.toContain('"checks"');
  });

  it('under --json: the job itself, one line', async () => {
    const { out, stdout } = capture(true);
    await printJob(out, job);
    expect(JSON.parse(stdout.text)).toEqual(job);
  });

  it("a failed job's SQL error: its message on the Error line, PostgreSQL's caret block indented under it", async () => {
    const { out, stdout } = capture();
    // CR LF after the first line, an escape after the caret, and a forged line after the block.
    const message =
      'syntax error at or near "FORM"\r\nLINE 1: SELECT * FORM orders\n                 ^\u001b[2J\nForged: CERTIFIED';
    await printJob(out, { ...job, status: 'FAILED', result: null, error: { message } });
    const lines = stdout.text.split('\n');
    const at = lines.findIndex((line) => line.startsWith('Error: '));
    expect(lines.slice(at, at + 3)).toEqual([
      'Error: syntax error at or near "FORM" Forged: CERTIFIED',
      '  LINE 1: SELECT * FORM orders',
      '                   ^',
    ]);
    // The caret stays under the word PostgreSQL stopped at, and no line of the service's reads as gds's.
    expect((lines[at + 2] ?? '').indexOf('^')).toBe((lines[at + 1] ?? '').indexOf('FORM'));
    expect(lines.filter((line) => /^\W*Forged:/.test(line))).toEqual([]);
  });
});
