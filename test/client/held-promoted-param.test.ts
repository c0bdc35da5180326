// A held-tables read of `gds plan` asks each row's promotion to the plan's environment (`promotedTo`); a
// service from before the parameter refuses it (400 invalid_query naming it): the read is asked again without
// it (keeping `staleSubmission=false`, which that service knows), and from then on sent without it. A service
// that knows neither names both in one refusal: both are dropped at once.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { BASE, useMockApi, useMockClient } from './mock-api.js';

const api = useMockApi();
const newClient = useMockClient('cli_5e55i0n70k3n0000aaaa');

const ROW = { id: 'tbl_1', name: 'orders', state: 'QUARANTINED' };
/** A service that knows none of `unknown`. */
const refusing = (...unknown: string[]) =>
  http.get(`${BASE}/api/held-tables`, ({ request }) => {
    const query = new URL(request.url).searchParams;
    const refused = unknown.filter((name) => query.has(name));
    if (refused.length > 0)
      return HttpResponse.json(
        {
          error: {
            code: 'invalid_query',
            message: `Unknown query parameters: ${refused.join(', ')}.`,
            details: { unknown: refused, allowed: ['environment', 'limit', 'cursor'] },
          },
        },
        { status: 400 },
      );
    return HttpResponse.json({ tables: [ROW], nextCursor: null });
  });
const sent = () =>
  api.seen
    .filter((r) => r.url.pathname.endsWith('/api/held-tables'))
    .map((r) => [r.url.searchParams.get('promotedTo'), r.url.searchParams.get('staleSubmission')]);

describe('held-tables and promotedTo', () => {
  it('asks a service without promotedTo again without it, keeping staleSubmission, then no longer sends it', async () => {
    api.use(refusing('promotedTo'));
    const client = newClient();
    const options = { staleSubmission: false, promotedTo: 'staging' } as const;
    expect(await client.tables.held('dev', options)).toEqual([ROW]);
    expect(await client.tables.held('dev', options)).toEqual([ROW]);
    expect(sent()).toEqual([
      ['staging', 'false'],
      [null, 'false'],
      [null, 'false'],
    ]);
  });

  it('drops both when a service knows neither', async () => {
    api.use(refusing('promotedTo', 'staleSubmission'));
    const client = newClient();
    expect(await client.tables.held('dev', { staleSubmission: false, promotedTo: 'staging' })).toEqual([ROW]);
    expect(sent()).toEqual([
      ['staging', 'false'],
      [null, null],
    ]);
  });
});
