// Each network command's flags and arguments, parsed by oclif with the project's config, apart from what
// the command does: a probe subclass records what run() would receive. Bad values end as exit 2 with
// nothing sent (the probe never runs); no flag reads a GDS_<FLAG> variable but those of src/cli/environment.ts.
import { describe, expect, it } from 'vitest';
import Api from '../../src/commands/api.js';
import AuditList from '../../src/commands/audit/list.js';
import MembersList from '../../src/commands/members/list.js';
import TokensIssue from '../../src/commands/tokens/issue.js';
import TokensRefresh from '../../src/commands/tokens/refresh.js';
import { flagsOf, parse, setEnv, usageError } from './helpers/oclif-parse.js';

describe('gds api', () => {
  it('parses method, string and typed fields, headers and input', async () => {
    const outcome = await parse(Api, [
      '/api/x?y=1',
      '-X',
      'patch',
      '-f',
      'name=Ada',
      '-f',
      'n=5',
      '-F',
      'n2=5',
      '-F',
      'ok=true',
      '-F',
      'none=null',
      '-F',
      'word=abc',
      '-H',
      'X-Trace: a:b',
      '--input',
      'body.json',
    ]);
    expect(outcome.parsed?.args).toEqual({ path: '/api/x?y=1' });
    expect(outcome.parsed?.flags).toMatchObject({
      method: 'PATCH',
      'raw-field': [
        ['name', 'Ada'],
        ['n', '5'],
      ],
      field: [
        ['n2', 5],
        ['ok', true],
        ['none', null],
        ['word', 'abc'],
      ],
      header: [['X-Trace', 'a:b']],
      input: 'body.json',
    });
  });

  it.each([
    [['/x', '-X', 'FETCH'], 'Expected one of GET, POST, PUT, PATCH, DELETE, got FETCH'],
    [['/x', '-f', 'novalue'], '"novalue" is not key=value'],
    [['/x', '-f', '=v'], '"=v" is not key=value'],
    // A header is masked whole in messages: without its colon, gds cannot tell its name from its value.
    [['/x', '-H', 'NoColonHere'], '"****" is not "Name: value"'],
    [['/x', '-H', 'Authorization: Bearer other'], 'Authorization is set by gds itself'],
    [['/x', '-H', 'host: evil.example'], 'host is set by gds itself'],
    [[], 'Missing required argument'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(Api, argv)).toContain(message);
  });

  it('GDS_METHOD, GDS_INPUT and GDS_FIELD are not read: only the command line says what is sent', async () => {
    setEnv({ GDS_FIELD: 'a=1', GDS_METHOD: 'delete', GDS_INPUT: '-' });
    const flags = await flagsOf(Api, ['/x']);
    expect(flags).not.toHaveProperty('method');
    expect(flags).not.toHaveProperty('input');
    expect(flags).not.toHaveProperty('field');
    expect(await flagsOf(Api, ['/x', '-X', 'GET'])).toMatchObject({ method: 'GET' });
  });
});

describe('gds audit list', () => {
  it('parses the filters; --since becomes a full ISO time', async () => {
    const flags = await flagsOf(AuditList, [
      '--event-type',
      'TABLE_CERTIFIED',
      '--since',
      '2026-01-31',
      '--limit',
      '7',
    ]);
    expect(flags).toMatchObject({
      'event-type': 'TABLE_CERTIFIED',
      since: '2026-01-31T00:00:00.000Z',
      limit: 7,
    });
  });

  it('--since: a time without an offset is UTC, as the service reads it, whatever the local zone', async () => {
    const zone = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati'; // UTC+14
    try {
      expect((await flagsOf(AuditList, ['--since', '2026-01-31T12:00'])).since).toBe(
        '2026-01-31T12:00:00.000Z',
      );
      expect((await flagsOf(AuditList, ['--since', '2026-01-31T12:00:00+02:00'])).since).toBe(
        '2026-01-31T10:00:00.000Z',
      );
      expect((await flagsOf(AuditList, ['--since', '2026-01-31T12:00:00-05:00'])).since).toBe(
        '2026-01-31T17:00:00.000Z',
      );
      // RFC 3339's other spellings of the same times.
      expect((await flagsOf(AuditList, ['--since', '2026-01-31 12:00'])).since).toBe(
        '2026-01-31T12:00:00.000Z',
      );
      expect((await flagsOf(AuditList, ['--since', '2026-01-31t12:00:00z'])).since).toBe(
        '2026-01-31T12:00:00.000Z',
      );
      expect((await flagsOf(AuditList, ['--since', '2026-01-31T12:00:00+0200'])).since).toBe(
        '2026-01-31T10:00:00.000Z',
      );
      expect((await flagsOf(AuditList, ['--since', '2026-01-31T12:00:00+02'])).since).toBe(
        '2026-01-31T10:00:00.000Z',
      );
      // A month alone is its first day, as it was read before the calendar check.
      expect((await flagsOf(AuditList, ['--since', '2026-01'])).since).toBe('2026-01-01T00:00:00.000Z');
    } finally {
      if (zone === undefined) delete process.env.TZ;
      else process.env.TZ = zone;
    }
  });

  it.each([
    [['--since', 'yesterday'], 'yesterday is not an ISO-8601 time'],
    // JavaScript reads a day its month does not have as one of the next month (2026-03-02): refused, as the service does.
    [['--since', '2026-02-30'], '--since 2026-02-30 is not a day of the calendar'],
    [['--since', '2026-04-31T12:00:00Z'], '--since 2026-04-31T12:00:00Z is not a day of the calendar'],
    [['--since', '2025-02-29'], '--since 2025-02-29 is not a day of the calendar'],
    [['--limit', '0'], 'greater than or equal to 1'],
    [['--limit', '201'], 'less than or equal to 200'],
    [['--limit', 'ten'], 'expects an integer'],
    [['--all', '--limit', '5'], 'cannot also be provided when using'],
    [['extra'], 'Unexpected argument: extra'],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(AuditList, argv)).toContain(message);
  });

  it('GDS_EVENT_TYPE, GDS_SINCE, GDS_LIMIT and GDS_ALL are not read', async () => {
    setEnv({ GDS_EVENT_TYPE: 'RECORD_CREATED', GDS_SINCE: 'soon', GDS_LIMIT: '9', GDS_ALL: 'yes' });
    const flags = await flagsOf(AuditList, []);
    expect(flags).not.toHaveProperty('event-type');
    expect(flags).not.toHaveProperty('since');
    expect(flags.all ?? false).toBe(false);
    expect(flags.limit).not.toBe(9);
  });
});

describe('gds members list', () => {
  it('takes no argument', async () => {
    expect(await flagsOf(MembersList, [])).toMatchObject({});
    expect(await usageError(MembersList, ['everyone'])).toContain('Unexpected argument: everyone');
  });
});

describe('gds tokens issue', () => {
  it('parses table grants into the request shape', async () => {
    const flags = await flagsOf(TokensIssue, [
      '--name',
      'nightly',
      '--env',
      'production',
      '--table',
      't_42:read,write',
      '--table',
      't_43:read',
    ]);
    expect(flags).toMatchObject({
      name: 'nightly',
      env: 'production',
      table: [
        { tableId: 't_42', permissions: ['read', 'write'] },
        { tableId: 't_43', permissions: ['read'] },
      ],
    });
  });

  it('parses workspace scopes', async () => {
    const flags = await flagsOf(TokensIssue, [
      '--name',
      'a',
      '--env',
      '*',
      '--scope',
      'workspace:read:audit',
    ]);
    expect(flags).toMatchObject({ env: '*', scope: ['workspace:read:audit'] });
  });

  it.each([
    [['--env', 'dev', '--table', 't:read'], 'Missing required flag --name'],
    [['--name', 'a', '--table', 't:read'], 'Missing required flag --env'],
    [['--name', 'a', '--env', 'dev'], 'Exactly one of the following must be provided: --scope, --table'],
    [
      ['--name', 'a', '--env', 'dev', '--table', 't:read', '--scope', 'workspace:read:audit'],
      'cannot also be provided',
    ],
    [['--name', 'a', '--env', 'dev', '--table', 't:admin'], 'Unknown permission admin'],
    [['--name', 'a', '--env', 'dev', '--table', 't'], 'is not <tableId>:<permissions>'],
    [['--name', 'a', '--env', 'dev', '--table', 't:'], 'is not <tableId>:<permissions>'],
    [
      ['--name', 'a', '--env', 'dev', '--scope', 'workspace:read:everything'],
      '"workspace:read:everything" is not one of them',
    ],
  ])('%j is a usage error', async (argv, message) => {
    expect(await usageError(TokensIssue, argv)).toContain(message);
  });

  it('GDS_NAME, GDS_ENV and GDS_TABLE are not read', async () => {
    setEnv({ GDS_NAME: 'from-env', GDS_ENV: 'staging', GDS_TABLE: 't_9:write' });
    expect(await usageError(TokensIssue, [])).toContain('Missing required flag');
  });
});

describe('gds tokens refresh', () => {
  it('takes the refresh token from the flag (or stdin); GDS_REFRESH_TOKEN is not read', async () => {
    expect(await flagsOf(TokensRefresh, ['--refresh-token', '-'])).toMatchObject({ 'refresh-token': '-' });
    setEnv({ GDS_REFRESH_TOKEN: 'rt_1.secret' });
    expect(await flagsOf(TokensRefresh, [])).not.toHaveProperty('refresh-token');
  });
});

describe('--save-profile of gds tokens issue and gds tokens refresh', () => {
  const issueArgs = ['--name', 'ci', '--env', 'dev', '--scope', 'workspace:read:audit'];

  it.each([
    [TokensIssue, issueArgs],
    [TokensRefresh, ['--refresh-token', '-']],
  ])('%o takes --save-profile <name> and --force; neither by default', async (command, argv) => {
    const plain = await flagsOf(command, argv);
    expect(plain).not.toHaveProperty('save-profile');
    expect(plain.force ?? false).toBe(false);
    expect(await flagsOf(command, [...argv, '--save-profile', 'ci', '--force'])).toMatchObject({
      'save-profile': 'ci',
      force: true,
    });
  });

  it.each([
    [TokensIssue, issueArgs],
    [TokensRefresh, []],
  ])(
    '%o: --force without --save-profile, or --save-profile without a name, is a usage error',
    async (command, argv) => {
      expect(await usageError(command, [...argv, '--force'])).toContain('--save-profile');
      expect(await usageError(command, [...argv, '--save-profile'])).toContain(
        '--save-profile expects a value',
      );
    },
  );
});

describe('global flags of the network commands', () => {
  it('--max-retry-after takes whole seconds from 0 (GDS_MAX_RETRY_AFTER is not read); GDS_PROFILE names the profile', async () => {
    expect(await flagsOf(MembersList, ['--max-retry-after', '0'])).toMatchObject({ 'max-retry-after': 0 });
    expect(await usageError(MembersList, ['--max-retry-after', '-1'])).toContain(
      'greater than or equal to 0',
    );
    setEnv({ GDS_MAX_RETRY_AFTER: '3', GDS_PROFILE: 'staging' });
    const flags = await flagsOf(MembersList, []);
    expect(flags).toMatchObject({ profile: 'staging' });
    expect(flags['max-retry-after']).not.toBe(3);
  });

  it('GDS_TOKEN and GDS_BASE are not read: SERVICE_TOKEN and SERVICE_API_URL are the variables', async () => {
    setEnv({ GDS_TOKEN: 'cli_fromGdsToken00000', GDS_BASE: 'https://elsewhere.example' });
    const flags = await flagsOf(MembersList, []);
    expect(flags.token).toBeUndefined();
    expect(flags.base).toBeUndefined();
  });
});
