// A token pasted where its id goes (`gds tokens revoke <refresh token>`, `gds tokens revoke --cli <cli_ token>`)
// names no token: the 404 says the reference back masked, as it says a client token, never whole (it would
// reach gds's error, a CI log, the server's log). An id of the server's shape is still said back as it is.
import { describe, expect, it } from 'vitest';
import { ENGINES, useEngineServer } from '../helpers/engines.js';
import { needs } from '../helpers/skip.js';

describe.each(ENGINES)('a token given as the id of the token to revoke on $engine', ({ postgres, skip }) => {
  const server = useEngineServer({ postgres, skip }, { jobs: 'manual' });
  const owner = () => server().user('OWNER').accessToken;

  it('an integration token’s refresh token: 404, its secret not said back', needs(skip), async () => {
    const { refreshToken } = (
      await server().issueToken('OWNER', {
        name: 'pasted',
        env: 'dev',
        scopes: [{ tableId: server().table('orders').id, permissions: ['read'] }],
      })
    ).tokens;
    const secret = refreshToken.split('.')[1] ?? '';
    expect(secret.length).toBeGreaterThan(20);
    const answer = await server().request('POST', '/api/integration/tokens/revoke', {
      token: owner(),
      body: { token: refreshToken },
    });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'token_not_found' });
    const text = JSON.stringify(answer.body);
    expect(text).not.toContain(refreshToken);
    expect(text).not.toContain(secret.slice(0, 8));
  });

  it('a cli_ token in the CLI token’s place: 404, not said back whole', needs(skip), async () => {
    const pasted = `cli_${'Qx7'.repeat(14)}`;
    const answer = await server().request('POST', `/api/cli-tokens/${pasted}/revoke`, { token: owner() });
    expect(answer.status).toBe(404);
    expect(answer.body.error).toMatchObject({ code: 'token_not_found' });
    expect(JSON.stringify(answer.body)).not.toContain(pasted);
  });

  it('an id of the server’s shape is said back as it is', needs(skip), async () => {
    const answer = await server().request('POST', '/api/integration/tokens/revoke', {
      token: owner(),
      body: { token: 'itk_0123456789abcdef' },
    });
    expect(answer.status).toBe(404);
    expect(answer.body.error.details).toMatchObject({ reference: 'itk_0123456789abcdef' });
    const cli = await server().request('POST', '/api/cli-tokens/clt_0123456789abcdef/revoke', {
      token: owner(),
    });
    expect(cli.status).toBe(404);
    expect(cli.body.error.message).toContain('clt_0123456789abcdef');
  });
});
