// The session glue: credentials → client → CliError. Which token and base a session uses (msw sees the
// requests), and what each client failure becomes: exit code, code, message and what to do next.
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { http, HttpResponse } from 'msw';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { GdsConfig, Profile } from '../../src/auth/config.js';
import { CliError } from '../../src/core/errors.js';
import { Output } from '../../src/cli/output.js';
import { redactError } from '../../src/cli/secrets.js';
import { openSession, sessionFailure, withSession } from '../../src/cli/session.js';
import type { Session } from '../../src/cli/session.js';
import { ApiError, createApiClient, NetworkError, staticToken } from '../../src/client/index.js';
import { BASE, useMockApi } from '../client/mock-api.js';
import { bashWords } from '../helpers/bash-words.js';

const api = useMockApi();
const TOKEN = 'cli_sessionTestToken00001';
let env: NodeJS.ProcessEnv;
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'gds-session-'));
  env = { GDS_CONFIG_DIR: join(dir, 'gds'), GDS_SECRET_STORAGE: 'file' };
});

const fromEnv = { baseUrl: BASE, baseSource: 'env' as const };
const withToken = (
  tokenSource: 'flag' | 'env' | 'profile:ci',
): Pick<Session, 'baseUrl' | 'baseSource' | 'credentials'> => ({
  ...fromEnv,
  credentials: {
    token: TOKEN,
    baseUrl: BASE,
    tokenSource,
    baseSource: 'env',
    tokenKind: 'static',
    storage: 'none',
  },
});

function apiError(
  status: number,
  code: string,
  extra: Partial<ConstructorParameters<typeof ApiError>[0]> = {},
) {
  return new ApiError({
    status,
    code,
    message: `Server says ${code}.`,
    method: 'GET',
    url: `${BASE}/api/x?a=1`,
    ...extra,
  });
}

function mapped(error: unknown, session = withToken('env')): CliError {
  const result = sessionFailure(error, session);
  expect(result).toBeInstanceOf(CliError);
  return result as CliError;
}

describe('sessionFailure: an ApiError becomes the exit code of its status and a next step', () => {
  it('401: the server message, where the refused token came from, how to get one', () => {
    const failure = mapped(apiError(401, 'invalid_token', { requestId: 'req_1' }));
    expect(failure).toMatchObject({
      exitCode: 3,
      code: 'invalid_token',
      message: 'Unauthorized: Server says invalid_token.',
      details: { status: 401, request: 'GET /api/x?a=1', requestId: 'req_1' },
    });
    expect(failure.suggestion).toContain('The token from SERVICE_TOKEN was refused');
    expect(failure.suggestion).toContain('gds auth set --token <t> --base <url>');
    expect(mapped(apiError(401, 'invalid_token'), withToken('profile:ci')).suggestion).toContain(
      'The token from profile ci was refused',
    );
    expect(mapped(apiError(401, 'invalid_token'), withToken('flag')).suggestion).toContain(
      'from the command line',
    );
  });

  it('401 wrong_audience: says which kinds of token there are', () => {
    expect(mapped(apiError(401, 'wrong_audience')).suggestion).toContain('gds tokens issue --scope');
  });

  it('401 wrong_audience: names the stored profile of that service that holds the kind of token asked for', () => {
    const refused = apiError(401, 'wrong_audience', {
      message: 'Table endpoints take a DATA-API token; this is a MANAGEMENT token.',
    });
    const profile = (kind: string, base: string, audience?: string) =>
      ({ kind, base, ...(audience === undefined ? {} : { audience }) }) as Profile;
    const config: GdsConfig = {
      version: 1,
      activeProfile: 'ci',
      profiles: {
        ci: profile('integration', BASE, 'MANAGEMENT'),
        elsewhere: profile('integration', 'https://other.example.com', 'DATA-API'),
        loader: profile('integration', `${BASE}/`, 'DATA-API'),
        me: profile('session', BASE),
      },
    };
    const session = withToken('profile:ci');
    if (session.credentials) session.credentials.profileName = 'ci';
    const failure = sessionFailure(refused, session, config) as CliError;
    expect(failure.exitCode).toBe(3);
    expect(failure.suggestion).toMatch(/^Run again with --profile loader: /);
    expect((sessionFailure(refused, withToken('flag'), config) as CliError).suggestion).toContain(
      '--profile loader (without --token)',
    );
    const none = { ...config, profiles: { me: profile('session', BASE) } };
    expect((sessionFailure(refused, session, none) as CliError).suggestion).toContain(
      'gds tokens issue --table',
    );
  });

  it('401 without credentials (the refresh call): the server message alone', () => {
    const failure = mapped(apiError(401, 'refresh_token_reused'), fromEnv);
    expect(failure).toMatchObject({ exitCode: 3, code: 'refresh_token_reused', suggestion: undefined });
  });

  it('403 naming the scope: how to get a token holding it', () => {
    const failure = mapped(
      apiError(403, 'missing_scope', { details: { requiredScope: 'workspace:read:audit' } }),
    );
    expect(failure).toMatchObject({ exitCode: 4, code: 'missing_scope' });
    expect(failure.details).toEqual({
      status: 403,
      request: 'GET /api/x?a=1',
      server: { requiredScope: 'workspace:read:audit' },
    });
    expect(failure.suggestion).toContain('needs the scope workspace:read:audit');
    expect(failure.suggestion).toContain("gds tokens issue --scope workspace:read:audit --env '*'");
  });

  it('403 naming a table scope: a DATA-API token granting the table, not a MANAGEMENT one', () => {
    const failure = mapped(
      apiError(403, 'missing_scope', { details: { requiredScope: 'tables:crm_contacts:write' } }),
    );
    expect(failure.suggestion).toContain('needs the scope tables:crm_contacts:write');
    expect(failure.suggestion).toContain('gds tokens issue --table crm_contacts:read,write');
    expect(failure.suggestion).not.toContain('MANAGEMENT');
    expect(failure.suggestion).not.toContain('--scope');
  });

  it("403 naming a scope no plain word: the suggested command quotes it, and bash reads back the service's scope", () => {
    const scoped = (scope: string) =>
      mapped(apiError(403, 'missing_scope', { details: { requiredScope: scope } })).suggestion ?? '';
    const management = scoped('workspace:read;touch PWNED $(id)');
    expect(bashWords(/gds tokens issue (--scope .*) --env '\*'/.exec(management)?.[1] ?? '')).toEqual([
      '--scope',
      'workspace:read;touch PWNED $(id)',
    ]);
    const table = scoped('tables:a b;id:write');
    expect(bashWords(/gds tokens issue (--table .*) --env <env>/.exec(table)?.[1] ?? '')).toEqual([
      '--table',
      'a b;id:read,write',
    ]);
  });

  it('403 without a scope: a role or permission problem', () => {
    expect(mapped(apiError(403, 'forbidden')).suggestion).toContain('Ask a workspace admin');
  });

  it('404 and 409 with a generic code: the generic next step', () => {
    expect(mapped(apiError(404, 'table_not_found'))).toMatchObject({ exitCode: 5, code: 'table_not_found' });
    expect(mapped(apiError(404, 'http_404')).suggestion).toContain('Nothing at GET /api/x?a=1');
    expect(mapped(apiError(409, 'conflict'))).toMatchObject({ exitCode: 6 });
    expect(mapped(apiError(409, 'conflict')).suggestion).toContain('try again');
  });

  it('a specific 404 or 409 code: a specific next step replaces the generic one, the HTTP request goes to details', () => {
    const notFound = mapped(apiError(404, 'table_not_found'));
    expect(notFound.message).toBe('Server says table_not_found.');
    expect(notFound.suggestion).toBe('gds list shows the ids you can use.');
    expect(notFound.details).toMatchObject({ request: 'GET /api/x?a=1' });
    const stateConflict = mapped(
      apiError(409, 'not_pending_review', { url: `${BASE}/api/tables/t_1/certify`, method: 'POST' }),
    );
    expect(stateConflict.suggestion).toBe('gds status t_1 shows where the table is now.');
    // The table as the user typed it goes into a line to paste: one word for the shell, never a second command.
    const typed = encodeURIComponent('a b;touch PWNED');
    const quoted = mapped(
      apiError(409, 'not_pending_review', { url: `${BASE}/api/tables/${typed}/certify`, method: 'POST' }),
    );
    expect(quoted.suggestion).toBe("gds status 'a b;touch PWNED' shows where the table is now.");
    const invalid = mapped(
      apiError(422, 'invalid_gate1', { url: `${BASE}/api/tables/${typed}/gate1`, method: 'PUT' }),
    );
    expect(invalid.suggestion).toBe(
      "gds gate validate 'a b;touch PWNED' -f <file> shows the same errors before anything is sent.",
    );
    // The service's message already says what to run: no second suggestion under it.
    const said = mapped(apiError(404, 'gate1_not_found', { message: 'None yet; run `gds gate apply t_1`.' }));
    expect(said.suggestion).toBeUndefined();
  });

  it('a step of a batch, named by the batch’s path alone: mapped as its status says, never "Invalid URL"', () => {
    const step = mapped(
      apiError(412, 'precondition_failed', { method: 'POST', url: '/api/artifacts/batch' }),
    );
    expect(step).toMatchObject({
      exitCode: 6,
      code: 'precondition_failed',
      details: { status: 412, request: 'POST /api/artifacts/batch' },
    });
  });

  it('400 and 422', () => {
    expect(mapped(apiError(400, 'invalid_request'))).toMatchObject({ exitCode: 7, suggestion: undefined });
    expect(mapped(apiError(422, 'predicates_failed'))).toMatchObject({ exitCode: 7 });
  });

  it('429 after the retries: when to try again', () => {
    const failure = mapped(apiError(429, 'rate_limited', { retryAfterSeconds: 42 }));
    expect(failure).toMatchObject({ exitCode: 8, details: { status: 429, retryAfterSeconds: 42 } });
    expect(failure.suggestion).toContain('Try again in 42 s (Retry-After)');
    expect(mapped(apiError(429, 'rate_limited')).suggestion).toContain('Wait a minute');
  });

  it('a 2xx the client could not read (invalid_response): exit 9, never 0', () => {
    expect(mapped(apiError(200, 'invalid_response'))).toMatchObject({
      exitCode: 9,
      code: 'invalid_response',
    });
  });

  it('5xx: exit 9 with the request id to quote', () => {
    const failure = mapped(apiError(503, 'http_503', { requestId: 'req_9' }));
    expect(failure).toMatchObject({ exitCode: 9 });
    expect(failure.suggestion).toContain('request id req_9');
  });
});

describe('server strings reach a terminal without control characters', () => {
  it('a message that would retitle the window and clear the screen is printed as plain text', () => {
    let stderr = '';
    const out = new Output({
      json: false,
      stdout: { write: () => true },
      stderr: { write: (c) => (stderr += c) },
    });
    out.error(mapped(apiError(404, 'x', { message: '\u001b]0;pwned\u0007Gone\u001b[2J\u009b1m.' })));
    expect(stderr).toContain('Error: Gone.\n');
    expect(stderr).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
});

describe('sessionFailure: a NetworkError', () => {
  it('exit 9 naming the base URL, where it came from, and --base / SERVICE_API_URL', () => {
    const error = new NetworkError({
      failure: 'connection',
      code: 'ECONNREFUSED',
      method: 'GET',
      url: `${BASE}/api/x`,
      reason: 'connection refused',
      cause: new Error('x'),
    });
    const failure = mapped(error);
    expect(failure).toMatchObject({
      exitCode: 9,
      code: 'unreachable',
      details: { url: BASE, cause: 'ECONNREFUSED' },
    });
    expect(failure.message).toContain(`Could not reach the service at ${BASE}`);
    expect(failure.suggestion).toContain('The API base URL came from SERVICE_API_URL');
    expect(failure.suggestion).toContain('--base <url> or SERVICE_API_URL');
  });

  it('behind a proxy, says the proxy may be what refused, by its variable, never its value', () => {
    const refused = () =>
      mapped(
        new NetworkError({
          failure: 'connection',
          code: 'ECONNREFUSED',
          method: 'GET',
          url: `${BASE}/api/x`,
          reason: 'connection refused',
          cause: new Error('x'),
        }),
      ).suggestion ?? '';
    const { hostname } = new URL(BASE);
    try {
      vi.stubEnv('HTTPS_PROXY', 'http://bob:s3cret@proxy.example:3128');
      expect(refused()).toContain('gds goes through the proxy in HTTPS_PROXY');
      expect(refused()).toContain(`NO_PROXY=${hostname}`);
      expect(refused()).not.toContain('s3cret');
      vi.stubEnv('HTTPS_PROXY', '');
      vi.stubEnv('https_proxy', '');
      expect(refused()).not.toContain('proxy');
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it('a long base URL is said back cut, its scheme and host kept, in the message and the --json line', async () => {
    const base = `${BASE}/${'stage/'.repeat(300)}v1`;
    api.use(http.get(`${base}/api/workspace/members`, () => HttpResponse.error()));
    const client = createApiClient({ baseUrl: base, auth: staticToken(TOKEN), sleep: async () => {} });
    const error = await client.members.list().catch((e: unknown) => e);
    await client.close();
    expect(error).toBeInstanceOf(NetworkError);
    const failure = mapped(error, { baseUrl: base, baseSource: 'env' });
    expect(failure.exitCode).toBe(9);
    expect(failure.message).toMatch(/^Could not reach the service at https:\/\/api\.test\/stage\/stage\//);
    expect(failure.message.length).toBeLessThan(600);
    const stderr = { text: '', write: (chunk: string) => ((stderr.text += chunk), true) };
    new Output({ json: true, stderr: stderr as never, env: {} }).error(redactError(failure, []));
    expect(stderr.text.length).toBeLessThan(1_500);
    const line = JSON.parse(stderr.text) as { error: { code: string; details: { url: string } } };
    expect(line.error.code).toBe('unreachable');
    expect(line.error.details.url).toBe(`${base.slice(0, 499)}…`);
  });

  it('a timeout has its own code', () => {
    const error = new NetworkError({
      failure: 'timeout',
      method: 'GET',
      url: BASE,
      reason: 'slow',
      cause: null,
    });
    expect(mapped(error).code).toBe('timeout');
  });

  it('anything else passes through unchanged', () => {
    const other = new Error('boom');
    expect(sessionFailure(other, fromEnv)).toBe(other);
  });
});

describe('openSession and withSession', () => {
  it('uses the --token flag over SERVICE_TOKEN, and sends the version in User-Agent', async () => {
    api.use(http.get(`${BASE}/api/workspace/members`, () => HttpResponse.json({ members: [] })));
    const members = await withSession(
      {
        flags: { token: TOKEN },
        version: '9.8.7',
        env: { ...env, SERVICE_TOKEN: 'cli_notThisOneToken000', SERVICE_API_URL: BASE },
      },
      ({ client, credentials }) => {
        expect(credentials?.tokenSource).toBe('flag');
        return client.members.list();
      },
    );
    expect(members).toEqual({ members: [] });
    expect(api.seen[0]?.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
    expect(api.seen[0]?.headers.get('user-agent')).toBe('gds/9.8.7');
  });

  it('maps what the work threw', async () => {
    api.use(
      http.get(`${BASE}/api/workspace/members`, () =>
        HttpResponse.json({ error: { code: 'missing_scope', message: 'No.' } }, { status: 403 }),
      ),
    );
    const failure = await withSession(
      { flags: {}, version: '1', env: { ...env, SERVICE_TOKEN: TOKEN, SERVICE_API_URL: BASE } },
      ({ client }) => client.members.list(),
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CliError);
    expect(failure).toMatchObject({ exitCode: 4, code: 'missing_scope' });
  });

  it('--json: a server echoing the token in its error details never gets it printed', async () => {
    const opaque = 'opaque-Secret-4711';
    api.use(
      http.get(`${BASE}/api/workspace/members`, ({ request }) => {
        const authorization = request.headers.get('authorization') ?? '';
        return HttpResponse.json(
          {
            error: {
              code: 'bad_\u0085state',
              message: 'Refused\u009b31m.',
              details: { authorization, token: authorization.slice('Bearer '.length), note: `saw ${opaque}` },
            },
          },
          { status: 400 },
        );
      }),
    );
    const failure = await withSession(
      { flags: {}, version: '1', env: { ...env, SERVICE_TOKEN: opaque, SERVICE_API_URL: BASE } },
      ({ client }) => client.members.list(),
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CliError);
    const stderr = { text: '', write: (chunk: string) => ((stderr.text += chunk), true) };
    new Output({ json: true, stderr: stderr as never, env: {} }).error(redactError(failure as CliError, []));
    expect(stderr.text).not.toContain(opaque);
    expect(stderr.text).not.toMatch(/[\u007f-\u009f]/);
    const lines = stderr.text.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0] ?? '')).toMatchObject({
      error: {
        code: 'bad_\u0085state',
        message: 'Refused\u009b31m.',
        details: { status: 400, server: { authorization: 'Bearer ****', token: '****', note: 'saw ****' } },
      },
    });
  });

  it('no token anywhere: exit 3 saying how to get one, before any request', async () => {
    const failure = await openSession({
      flags: {},
      version: '1',
      env: { ...env, SERVICE_API_URL: BASE },
    }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ exitCode: 3, code: 'no_token' });
    expect((failure as CliError).suggestion).toContain('gds auth set --token <t> --base <url>');
    // A person reads the three ways each on a line of its own, as the suggestion lists them.
    const stderr = { text: '', write: (chunk: string) => ((stderr.text += chunk), true) };
    new Output({ json: false, stderr: stderr as never, env: {} }).error(failure as CliError);
    expect(stderr.text.split('\n').slice(1, 5)).toEqual([
      'Get credentials with one of:',
      '  gds auth set --token <t> --base <url>      store a CLI token in a profile',
      '  gds auth login                             sign in with the browser',
      '  SERVICE_TOKEN=<t> SERVICE_API_URL=<url>    in CI, nothing stored',
    ]);
  });

  it('authenticated: false needs only the base and sends no Authorization header', async () => {
    api.use(
      http.post(`${BASE}/api/integration/refresh`, () =>
        HttpResponse.json({ error: { code: 'x', message: 'y' } }, { status: 401 }),
      ),
    );
    const failure = await withSession(
      { flags: {}, version: '1', env: { ...env, SERVICE_API_URL: BASE }, authenticated: false },
      ({ client }) => client.tokens.refresh('rt_1.x'),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({ exitCode: 3, code: 'x' });
    expect(api.seen[0]?.headers.get('authorization')).toBeNull();
  });

  it('authenticated: false without any base: exit 3 naming --base and SERVICE_API_URL', async () => {
    const failure = await openSession({ flags: {}, version: '1', env, authenticated: false }).catch(
      (e: unknown) => e,
    );
    expect(failure).toMatchObject({ exitCode: 3, code: 'no_base_url' });
    expect((failure as CliError).suggestion).toContain('SERVICE_API_URL');
  });

  it('max-retry-after 0: a 429 asking for a wait fails at once (one request) with exit 8', async () => {
    api.use(
      http.get(`${BASE}/api/workspace/members`, () =>
        HttpResponse.json(
          { error: { code: 'rate_limited', message: 'Slow down.' } },
          { status: 429, headers: { 'retry-after': '30' } },
        ),
      ),
    );
    const failure = await withSession(
      {
        flags: { 'max-retry-after': 0 },
        version: '1',
        env: { ...env, SERVICE_TOKEN: TOKEN, SERVICE_API_URL: BASE },
      },
      ({ client }) => client.members.list(),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({ exitCode: 8, code: 'rate_limited', details: { retryAfterSeconds: 30 } });
    expect(api.seen).toHaveLength(1);
  });
});

describe("a 60-minute token drawn on a person's token", () => {
  it('is drawn again when the service says it expired, so a run longer than an hour goes on', async () => {
    const drawn: string[] = [];
    const seen: string[] = [];
    api.use(
      http.post(`${BASE}/api/integration/short-lived-tokens`, ({ request }) => {
        expect(request.headers.get('authorization')).toBe(`Bearer ${TOKEN}`);
        drawn.push(`mgt_drawn_${drawn.length + 1}`);
        return HttpResponse.json({
          audience: 'MANAGEMENT',
          env: '*',
          scopes: ['workspace:read'],
          accessToken: drawn.at(-1),
          expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
        });
      }),
      http.get(`${BASE}/api/workspace/members`, ({ request }) => {
        const authorization = request.headers.get('authorization') ?? '';
        seen.push(authorization);
        // The first drawn token has run out (an hour of work went by).
        if (authorization === 'Bearer mgt_drawn_1')
          return HttpResponse.json(
            { error: { code: 'token_expired', message: 'Expired.' } },
            { status: 401 },
          );
        return HttpResponse.json({ members: [] });
      }),
    );
    const members = await withSession(
      {
        flags: {},
        version: '1',
        env: { ...env, SERVICE_TOKEN: TOKEN, SERVICE_API_URL: BASE },
        draw: async () => ({ env: '*', scopes: ['workspace:read' as never] }),
      },
      ({ client }) => client.members.list(),
    );
    expect(members).toEqual({ members: [] });
    expect(drawn).toEqual(['mgt_drawn_1', 'mgt_drawn_2']);
    expect(seen).toEqual(['Bearer mgt_drawn_1', 'Bearer mgt_drawn_2']);
  });

  it('is drawn again before it runs out, not sent when it is about to', async () => {
    let expiresIn = 30_000; // the first drawn token has 30 s left when it arrives
    const drawn: string[] = [];
    const seen: string[] = [];
    api.use(
      http.post(`${BASE}/api/integration/short-lived-tokens`, () => {
        drawn.push(`mgt_soon_${drawn.length + 1}`);
        const answer = {
          audience: 'MANAGEMENT',
          env: '*',
          scopes: ['workspace:read'],
          accessToken: drawn.at(-1),
          expiresAt: new Date(Date.now() + expiresIn).toISOString(),
        };
        expiresIn = 3_600_000;
        return HttpResponse.json(answer);
      }),
      http.get(`${BASE}/api/workspace/members`, ({ request }) => {
        seen.push(request.headers.get('authorization') ?? '');
        return HttpResponse.json({ members: [] });
      }),
    );
    await withSession(
      {
        flags: {},
        version: '1',
        env: { ...env, SERVICE_TOKEN: TOKEN, SERVICE_API_URL: BASE },
        draw: async () => ({ env: '*', scopes: ['workspace:read' as never] }),
      },
      ({ client }) => client.members.list(),
    );
    expect(seen).toEqual(['Bearer mgt_soon_2']);
  });
});
