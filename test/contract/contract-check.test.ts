// The contract checker itself: it must flag what the contract test exists to catch.
import { describe, expect, it } from 'vitest';
import type { ObservedResponse } from '../../src/server/contract-check.js';
import { ContractChecker } from '../../src/server/contract-check.js';

const rateHeaders = {
  'x-ratelimit-limit': '200',
  'x-ratelimit-remaining': '199',
  'x-ratelimit-reset': '1800000000',
};
const json = { 'content-type': 'application/json; charset=utf-8' };
const records: ObservedResponse = {
  method: 'GET',
  url: '/api/tables/t1/records',
  route: '/api/tables/:tableId/records',
  status: 200,
  headers: { ...json, ...rateHeaders },
  body: JSON.stringify({
    records: [{ id: 'r1', email: 'a@example.com' }],
    page: 1,
    limit: 50,
    total: 1,
    nextCursor: null,
  }),
};

function problems(response: ObservedResponse): string[] {
  const checker = new ContractChecker();
  checker.check(response);
  return checker.violations.flatMap((v) => v.problems);
}

describe('contract checker', () => {
  it('accepts a response that matches the contract', () => {
    expect(problems(records)).toEqual([]);
  });

  it('flags an undocumented status', () => {
    expect(problems({ ...records, status: 418 })).toEqual([
      'status 418 is not documented for GET /api/tables/{tableId}/records',
    ]);
  });

  it('flags a path or method the contract does not list', () => {
    expect(problems({ ...records, route: undefined, url: '/nope' })).toEqual([
      'path /nope is not in the contract',
    ]);
    expect(problems({ ...records, method: 'PUT' })).toEqual([
      'PUT /api/tables/{tableId}/records is not in the contract',
    ]);
  });

  it('flags a body of the wrong shape', () => {
    const body = JSON.stringify({
      records: [{ email: 'no id' }],
      page: 0,
      limit: 50,
      total: 1,
      nextCursor: null,
    });
    expect(problems({ ...records, body })).toEqual([
      "body /records/0: must have required property 'id'",
      'body /page: must be >= 1',
    ]);
  });

  it('flags a missing rate-limit header and an error body that is not the shared one', () => {
    const headers = { ...json, 'x-ratelimit-limit': '200', 'x-ratelimit-reset': '1800000000' };
    expect(problems({ ...records, status: 403, headers, body: JSON.stringify({ message: 'no' }) })).toEqual([
      'required header X-RateLimit-Remaining is missing',
      "body /: must have required property 'error'",
      'body /: must NOT have additional properties',
    ]);
  });

  it('flags a 429 without Retry-After, and a body where none is documented', () => {
    const error = JSON.stringify({ error: { code: 'rate_limited', message: 'slow down' } });
    expect(problems({ ...records, status: 429, body: error })).toEqual([
      'required header Retry-After is missing',
    ]);
    expect(
      problems({
        ...records,
        method: 'DELETE',
        route: '/api/tables/:tableId/records/:recordId',
        status: 204,
      }),
    ).toEqual(['a body was sent but none is documented']);
  });

  it('flags Idempotent-Replayed on an answer that does not document it, and takes it where documented', () => {
    const replayed = { ...records, headers: { ...records.headers, 'idempotent-replayed': 'true' } };
    expect(problems(replayed)).toEqual(['header Idempotent-Replayed is sent but not documented']);
    // Every answer of a keyed gate submission can be replayed: a new one (201) and one left fresh (200).
    const proof = JSON.stringify({
      id: 'prf_1',
      kind: 'submit',
      gate: 1,
      tableId: 't1',
      passed: true,
      results: [],
      failedPredicates: [],
      rowsChecked: 0,
      sample: null,
      tableVersion: { definition: 1, gate1: 1, data: 1 },
      ranAt: '2026-01-01T00:00:00Z',
      state: 'PENDING_REVIEW',
    });
    for (const status of [200, 201]) {
      const submission: ObservedResponse = {
        method: 'POST',
        url: '/api/tables/t1/gate-submissions',
        route: '/api/tables/:tableId/gate-submissions',
        status,
        headers: { ...json, 'idempotent-replayed': 'true' },
        body: proof,
      };
      expect(problems(submission), String(status)).toEqual([]);
      expect(problems({ ...submission, headers: { ...json, 'idempotent-replayed': 'yes' } })).toEqual([
        'header Idempotent-Replayed: "yes" does not match its schema',
      ]);
    }
  });
});
