// What `gds recertify` says on stderr of the tables waiting for review a run rebuilt (their proofs stale).
import { describe, expect, it } from 'vitest';
import { staleSubmissionsNote } from '../../src/services/recertification.js';

describe('staleSubmissionsNote', () => {
  it('says one table in the singular', () => {
    expect(staleSubmissionsNote(['orders'])).toBe(
      '1 table waiting for review was rebuilt since it was submitted (orders): certify is blocked until it is ' +
        'submitted again. gds apply --submit, run for their project, submits them again (in CI, run gds ' +
        'recertify before apply --submit); gds gate submit <table> submits one.',
    );
  });

  it('names five tables and counts the rest, each table once', () => {
    const note = staleSubmissionsNote(['a', 'b', 'a', 'c', 'd', 'e', 'f', 'g']);
    expect(note).toMatch(
      /^7 tables waiting for review were rebuilt since they were submitted \(a, b, c, d, e, and 2 more\): certify is blocked until they are submitted again\./,
    );
  });
});
