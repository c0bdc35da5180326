// The line `gds apply` says for each step on stderr: the service's strings in its reason (a proof's time) or
// its failure's message stay on that line, so that none forges a line of gds's own under it.
import { describe, expect, it } from 'vitest';
import { printAction } from '../../src/cli/project-views.js';
import { capturedOutput } from '../helpers/captured-output.js';

const FORGED = '\nForged:   CERTIFIED by you';

describe('gds apply: the line of a step', () => {
  it.each([
    [
      'unchanged',
      { reason: `already submitted since the plan (proof prf_1 of 2026-12-06T04:00:00Z${FORGED}, fresh)` },
    ],
    ['failed', { error: { exitCode: 1, code: 'failed', message: `Refused${FORGED}` } }],
    [
      'failed',
      { error: { exitCode: 6, code: 'name_conflict', message: 'Held.', suggestion: `Promote it${FORGED}` } },
    ],
  ] as const)('%s: one line, the string whole', async (outcome, extra) => {
    const { out, stderr } = capturedOutput(false);
    printAction(out, { table: 'orders', tableId: 'tbl_1', step: 'submit', outcome, ...extra });
    expect(stderr.text.split('\n').filter((line) => line.startsWith('Forged:'))).toEqual([]);
    expect(stderr.text).toMatch(/^orders \(tbl_1\): submit .* Forged: {3}CERTIFIED by you.*\n$/);
  });
});
