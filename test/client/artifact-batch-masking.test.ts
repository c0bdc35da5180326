// POST /api/artifacts/batch answers 200 with each step's error inside: those errors are masked as an error
// answer's are (the token the client sent, whatever its form, and every kind of token the service issues),
// so a token a service echoes never reaches `gds apply`'s lines or its --json.
import { http, HttpResponse } from 'msw';
import { describe, expect, it } from 'vitest';
import { BASE, useMockApi, useMockClient } from './mock-api.js';

const TOKEN = 'opaque-secret-of-no-known-kind-0123';
const OTHER = 'cli_9f8e7d6c5b4a39281706aa';
const api = useMockApi();
const client = useMockClient(TOKEN);

describe('a batch write’s step errors', () => {
  it('never carry the caller’s token or any service token', async () => {
    const error = (where: string) => ({
      error: {
        code: 'invalid_request',
        message: `${where}: Bearer ${TOKEN} refused; try ${OTHER}`,
        details: { sent: TOKEN, header: `Bearer ${TOKEN}` },
      },
    });
    api.use(
      http.post(`${BASE}/api/artifacts/batch`, () =>
        HttpResponse.json({
          results: [
            {
              index: 0,
              tableId: 'tbl_1',
              definition: { status: 200, changed: true },
              gate1: { status: 400, changed: false, error: error('gate1') },
              contract: { status: 400, changed: false, error: error('contract') },
            },
            {
              index: 1,
              tableId: null,
              definition: { status: 400, changed: false, error: error('definition') },
            },
          ],
        }),
      ),
    );
    const results = await client().artifacts.batch([{ tableId: 'tbl_1' }, { tableId: 'tbl_2' }]);
    const text = JSON.stringify(results);
    expect(text).not.toContain(TOKEN);
    expect(text).not.toContain(OTHER);
    expect(results[0]?.gate1?.error?.error.message).toBe('gate1: Bearer **** refused; try cli_…****');
    expect(results[1]?.definition?.error?.error.details).toEqual({ sent: '****', header: 'Bearer ****' });
    expect(results[0]?.definition).toEqual({ status: 200, changed: true });
  });
});
