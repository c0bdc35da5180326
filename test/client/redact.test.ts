import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { inspect } from 'node:util';
import { echoed, echoedPath } from '../../src/core/echo.js';
import { maskToken, redactJson, redactSecrets } from '../../src/core/redact.js';

const JWT = 'eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJ1c2VyLTEiLCJzY29wZSI6InJlYWQifQ.MEUCIQDx5w1-abc_def';

describe('maskToken', () => {
  it.each([
    ['cli_9f8e7d6c5b4a39281706', 'cli_…****'],
    ['tf_9f8e7d6c5b4a39281706', 'tf_…****'],
    ['gdsr_Zm9vYmFyYmF6cXV4cXV1eA', 'gdsr_…****'],
    ['rt_9f8e7d6c5b4a3921.Zm9vYmFyYmF6cXV4cXV1eA', 'rt_…****'],
    [JWT, 'eyJ…****'],
    ['3f2a9c.d8e7f6a5b4c3d2e1', '****'],
    ['cli_short', '****'],
    ['', '****'],
  ])('masks %s as %s', (token, masked) => {
    expect(maskToken(token)).toBe(masked);
  });

  it('never returns more than the kind of any token', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (token) => {
        const masked = maskToken(token);
        expect(masked.replace(/…\*{4}$|\*{4}$/, '').length).toBeLessThanOrEqual(4);
      }),
    );
  });
});

describe('redactSecrets', () => {
  it('masks a known secret an echo cut (its start before …, a path end after it) and a JWT cut before its signature', () => {
    const secret = `sk-live-${'Ab3dEf9h'.repeat(12)}`;
    const text = `Unexpected argument: ${echoed(secret)}. Wrote ${echoedPath(secret)}. Also ${echoed(`list ${secret}`)}`;
    const masked = redactSecrets(text, [secret]);
    expect(masked).not.toContain(secret.slice(0, 12));
    expect(masked).not.toContain(secret.slice(-12));
    expect(masked).toBe('Unexpected argument: ****. Wrote ****. Also list ****');
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${'eyJzdWIiOiJ4In0'.repeat(10)}.c2ln`;
    expect(redactSecrets(`got ${echoed(jwt)}`)).toBe('got eyJ…****');
  });

  it('masks bearer headers, JWTs, cli_ and tf_ tokens and secret JSON fields', () => {
    const text = [
      'Authorization: Bearer abc.def-123',
      `jwt=${JWT}`,
      'static cli_9f8e7d6c5b4a39281706 and client tf_0011223344556677',
      '{"refreshToken":"tok1.s3cr3t","name":"keep me"}',
    ].join('\n');
    expect(redactSecrets(text)).toBe(
      [
        'Authorization: Bearer ****',
        'jwt=eyJ…****',
        'static cli_…**** and client tf_…****',
        '{"refreshToken":"****","name":"keep me"}',
      ].join('\n'),
    );
  });

  it('masks session (gdsr_) and integration (rt_<id>.<secret>) refresh tokens, also in a stray argument', () => {
    const text = [
      'refresh_token=gdsr_Zm9vYmFyYmF6cXV4cXV1eA&grant_type=refresh_token',
      'Unexpected argument: rt_9f8e7d6c5b4a3921.Zm9vYmFyYmF6cXV4cXV1eA',
      '--refresh-token=rt_9f8e7d6c5b4a3921.Zm9vYmFyYmF6cXV4cXV1eA --token=cli_9f8e7d6c5b4a39281706',
      '{"refresh_token":"opaque-value","access_token":"opaque-2"}',
    ].join('\n');
    expect(redactSecrets(text)).toBe(
      [
        'refresh_token=gdsr_…****&grant_type=refresh_token',
        'Unexpected argument: rt_…****',
        '--refresh-token=rt_…**** --token=cli_…****',
        '{"refresh_token":"****","access_token":"****"}',
      ].join('\n'),
    );
  });

  it('leaves ids that only look like a prefix alone', () => {
    const text =
      'family rt_9f8e7d6c5b4a3921 of itk_0011223344556677; start_date, alert_level; source rt_sales.orders_daily, my_cli_settings_table';
    expect(redactSecrets(text)).toBe(text);
  });

  it('masks a known secret of any shape wherever it appears', () => {
    expect(redactSecrets('refresh 3f2a9c.d8e7f6a5 failed (3f2a9c.d8e7f6a5)', ['3f2a9c.d8e7f6a5'])).toBe(
      'refresh **** failed (****)',
    );
  });

  it('masks a known secret also as JSON and util.inspect escape it (a carriage return, a backslash, a quote)', () => {
    for (const secret of ['plainsecret\r', 'plain\\secret', "plain'secret\u0001", 'plain"secret\t']) {
      const logged = `argv: ${inspect(['--token', secret])}`;
      const json = JSON.stringify({ token: secret, note: `given ${secret}` });
      for (const text of [logged, json, `raw ${secret} end`]) {
        const shown = redactSecrets(text, [secret]);
        expect(shown).toContain('****');
        expect(shown).not.toContain('plain');
      }
    }
  });

  it('redactJson masks such a secret in error details and still gives back the same shape', () => {
    const secret = 'plain\\secret\r';
    expect(redactJson({ request: { header: `X-Key: ${secret}` }, n: 1 }, [secret])).toEqual({
      request: { header: 'X-Key: ****' },
      n: 1,
    });
  });

  it('masks a secret carried in a URL query by its name, whatever it looks like, and keeps the other parameters', () => {
    expect(redactSecrets('GET http://h/v1/api/me?token=abc123&page=2 failed')).toBe(
      'GET http://h/v1/api/me?token=****&page=2 failed',
    );
    expect(redactSecrets("argv: [ '/api/x?page=1&Access_Token=s3cr3t#top' ]")).toBe(
      "argv: [ '/api/x?page=1&Access_Token=****#top' ]",
    );
    expect(redactSecrets('/cb?code=1&client_secret=x&api_key=y&apikey=z&password=p&secret=q')).toBe(
      '/cb?code=1&client_secret=****&api_key=****&apikey=****&password=****&secret=****',
    );
    // With no `_` or `:` anywhere to say a pattern may match.
    expect(redactSecrets('GET /v1/x?apikey=SECRET')).toBe('GET /v1/x?apikey=****');
    // A parameter only ending in one of those names is not one.
    expect(redactSecrets('/api/x?mytoken=1&tokens=2')).toBe('/api/x?mytoken=1&tokens=2');
  });

  it('leaves text without secrets unchanged', () => {
    const text = 'GET http://127.0.0.1:8787/api/tables/t_42/records?page=2 → 200 request-id=req-9';
    expect(redactSecrets(text)).toBe(text);
  });

  it('is idempotent', () => {
    const once = redactSecrets(`Bearer ${JWT} and cli_9f8e7d6c5b4a39281706`);
    expect(redactSecrets(once)).toBe(once);
  });
});
