// A held-tables read that plans no submission asks the service not to work out which submissions are stale
// (`staleSubmission=false`); a service from before the parameter refuses it (400 invalid_query naming it),
// and the read is asked again without it, and from then on sent without it. A read that plans submissions
// never sends it.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { BASE, useMockApi, useMockClient } from './mock-api.js';

const api = useMockApi();
const newClient = useMockClient('cli_5e55i0n70k3n0000aaaa');

const ROW = { id: 'tbl_1', name: 'orders', state: 'PENDING_REVIEW' };
/** An older service: it knows no `staleSubmission` and always says which submissions are stale. */
const older = http.get(`${BASE}/api/held-tables`, ({ request }) => {
  const query = new URL(request.url).searchParams;
  if (query.has('staleSubmission'))
    return HttpResponse.json(
      {
        error: {
          code: 'invalid_query',
          message: 'Unknown query parameters: staleSubmission.',
          details: { unknown: ['staleSubmission'], allowed: ['environment', 'limit', 'cursor'] },
        },
      },
      { status: 400 },
    );
  return HttpResponse.json({ tables: [{ ...ROW, staleSubmission: true }], nextCursor: null });
});
const sent = () =>
  api.seen
    .filter((r) => r.url.pathname.endsWith('/api/held-tables'))
    .map((r) => r.url.searchParams.get('staleSubmission'));

describe('held-tables and staleSubmission', () => {
  it('sends staleSubmission=false only when asked, and a newer service answers without the field', async () => {
    api.use(
      http.get(`${BASE}/api/held-tables`, ({ request }) => {
        const without = new URL(request.url).searchParams.get('staleSubmission') === 'false';
        return HttpResponse.json({
          tables: [without ? ROW : { ...ROW, staleSubmission: false }],
          nextCursor: null,
        });
      }),
    );
    const client = newClient();
    expect(await client.tables.held('dev', { staleSubmission: false })).toEqual([ROW]);
    expect(await client.tables.held('dev')).toEqual([{ ...ROW, staleSubmission: false }]);
    expect(sent()).toEqual(['false', null]);
  });

  it('asks an older service again without it, then no longer sends it', async () => {
    api.use(older);
    const client = newClient();
    expect(await client.tables.held('dev', { staleSubmission: false })).toEqual([
      { ...ROW, staleSubmission: true },
    ]);
    expect(await client.tables.held('dev', { staleSubmission: false })).toHaveLength(1);
    expect(sent()).toEqual(['false', null, null]);
  });

  it('is still an error for any other refusal', async () => {
    api.use(
      http.get(`${BASE}/api/held-tables`, () =>
        HttpResponse.json(
          {
            error: {
              code: 'invalid_query',
              message: 'environment is required',
              details: { parameter: 'environment' },
            },
          },
          { status: 400 },
        ),
      ),
    );
    await expect(newClient().tables.held('dev', { staleSubmission: false })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_query',
    });
    expect(sent()).toEqual(['false']);
  });
});
