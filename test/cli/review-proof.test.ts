// The queue's proof column (`gds review`, its walk and --json's proof.fresh): a proof the table moved past
// since its submission is not "passed", since certify is blocked until the table is submitted again.
import { describe, expect, it } from 'vitest';
import type { QueueEntry } from '../../src/services/review.js';
import { proofSummary } from '../../src/services/review.js';

const withProof = (proof: Partial<NonNullable<QueueEntry['proof']>>): QueueEntry =>
  ({
    tableName: 'orders',
    tableId: 'tbl_1',
    proof: {
      id: 'prf_1',
      passed: true,
      failedPredicates: [],
      tableVersion: { definition: 1, gate1: 2, data: 3 },
      fresh: true,
      changedSince: [],
      ...proof,
    },
  }) as unknown as QueueEntry;

describe('the proof of a waiting table in a few words', () => {
  it('passed, failed, or no proof', () => {
    expect(proofSummary(withProof({}))).toBe('passed');
    expect(proofSummary(withProof({ passed: false, failedPredicates: ['a', 'b'] }))).toBe('failed: a, b');
    expect(proofSummary({ proof: null } as unknown as QueueEntry)).toBe('no proof stored');
  });

  it('stale when the table moved since: what moved, and that it must be submitted again', () => {
    const stale = withProof({ fresh: false, changedSince: [{ what: 'data', from: 3, to: 4 }] });
    expect(proofSummary(stale)).toBe('passed, stale (data v3→v4 since): submit it again to certify');
    const failed = withProof({
      passed: false,
      failedPredicates: ['a'],
      fresh: false,
      changedSince: [
        { what: 'definition', from: 1, to: 2 },
        { what: 'gate1', from: 2, to: 3 },
      ],
    });
    expect(proofSummary(failed)).toBe(
      'failed: a, stale (definition v1→v2, gate1.yml v2→v3 since): submit it again to certify',
    );
  });

  it('stale when the semantic contract changed since the submission (set-intent, a restore)', () => {
    const stale = withProof({ fresh: false, changedSince: [{ what: 'contract', from: 1, to: 2 }] });
    expect(proofSummary(stale)).toBe('passed, stale (contract v1→v2 since): submit it again to certify');
  });
});
