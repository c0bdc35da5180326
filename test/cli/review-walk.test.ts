// The review walk's replies follow the one stream rule (docs/output.md): the table's view on stdout, each
// decision confirmed on stderr with `✓`; the submission time reads relative on a terminal.
import { beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiClient } from '../../src/client/index.js';
import type { Session } from '../../src/cli/session.js';
import type { QueueEntry } from '../../src/services/review.js';
import { CliError, ExitCode } from '../../src/core/errors.js';
import { capturedOutput } from '../helpers/captured-output.js';

const answers: string[] = [];
/** What rejectTable throws, when set: the service's refusal. */
let refusal: Error | undefined;
vi.mock('../../src/cli/prompt.js', () => ({
  select: async () => answers.shift(),
  text: async () => 'null rate too high',
}));
vi.mock('../../src/services/certification.js', () => ({
  requireInteractiveSession: () => undefined,
  certifyTable: async () => ({
    contract: { id: 'ctr_1', status: 'ACTIVE', certifiedAt: new Date().toISOString() },
  }),
  rejectTable: async () => {
    if (refusal !== undefined) throw refusal;
    return { tableId: 'tbl_2', state: 'QUARANTINED' };
  },
}));

const { walkQueue } = await import('../../src/cli/review-walk.js');

function entry(tableName: string, tableId: string, createdAt: string): QueueEntry {
  return {
    tableName,
    tableId,
    environmentLabel: 'dev',
    proof: null,
    sinceCertified: null,
    openRecertificationRequests: [],
    submittedBy: { email: 'steward@example.com', userId: 'usr_1' },
    createdAt,
  } as unknown as QueueEntry;
}

async function walk(tty: boolean, second = 'customers') {
  const { out, stdout, stderr } = capturedOutput(tty);
  const submitted = new Date(Date.now() - 12 * 60_000 - 5000).toISOString();
  async function* pages() {
    yield { rows: [entry('orders', 'tbl_1', submitted), entry(second, 'tbl_2', submitted)] };
  }
  await walkQueue(out, {} as ApiClient, { credentials: undefined } as unknown as Session, pages());
  return { stdout: stdout.text, stderr: stderr.text, submitted };
}

describe('gds review: the walk', () => {
  beforeEach(() => {
    answers.splice(0, answers.length, 'certify', 'reject');
    refusal = undefined;
  });

  it('confirms each decision on stderr with ✓, never on stdout', async () => {
    const { stdout, stderr } = await walk(false);
    expect(stderr).toContain('✓ Certified orders: contract ctr_1 ACTIVE.\n');
    expect(stderr).toContain('✓ Rejected customers: now QUARANTINED.\n');
    expect(stderr).toContain('2 of 2 decided.');
    expect(stdout).not.toMatch(/Certified|Rejected/);
    expect(stdout).toContain('Proof:     no proof stored');
  });

  it('skip leaves a table waiting and goes on; quit ends the walk', async () => {
    answers.splice(0, answers.length, 'skip', 'reject');
    const skipped = await walk(false);
    expect(skipped.stderr).not.toContain('Certified orders');
    expect(skipped.stderr).toContain('✓ Rejected customers: now QUARANTINED.\n');
    expect(skipped.stderr).toContain('1 of 2 decided.');

    answers.splice(0, answers.length, 'quit');
    const quit = await walk(false);
    expect(quit.stdout).not.toContain('customers');
    expect(quit.stderr).toContain('0 of 1 decided.');
  });

  it('says when the table was submitted relative on a terminal, ISO piped', async () => {
    expect((await walk(true)).stdout).toContain('Submitted: 12m ago by steward@example.com');
    const piped = await walk(false);
    expect(piped.stdout).toContain(`Submitted: ${piped.submitted} by steward@example.com`);
  });

  it("says a refused decision on one line: a table name of the service's on two forges no line", async () => {
    refusal = new CliError('The table is CERTIFIED.', { exitCode: ExitCode.Conflict });
    const { stderr } = await walk(false, 'customers\nForged:   CERTIFIED by you');
    expect(stderr).toContain(
      'Warning: customers Forged:   CERTIFIED by you was not rejected: The table is CERTIFIED.\n',
    );
    expect(stderr.split('\n').filter((line) => line.startsWith('Forged:'))).toEqual([]);
  });
});
