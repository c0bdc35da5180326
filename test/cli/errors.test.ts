import { describe, expect, it } from 'vitest';
import { CliError, ExitCode, exitCodeForStatus } from '../../src/core/errors.js';
import { commandSuggestion, toCliError, unknownCommandWords } from '../../src/cli/errors.js';
import { redactError, secretsFrom } from '../../src/cli/secrets.js';
import { maskToken, redactSecrets } from '../../src/core/redact.js';

describe('exit codes', () => {
  it('are the ones the README documents', () => {
    expect(ExitCode).toEqual({
      Ok: 0,
      Failure: 1,
      Usage: 2,
      Unauthenticated: 3,
      Forbidden: 4,
      NotFound: 5,
      Conflict: 6,
      Refused: 7,
      RateLimited: 8,
      Unavailable: 9,
      Interrupted: 130,
    });
  });

  it.each([
    [200, 0],
    [204, 0],
    [400, 7],
    [401, 3],
    [403, 4],
    [404, 5],
    [409, 6],
    [412, 6],
    [422, 7],
    [429, 8],
    [500, 9],
    [502, 9],
    [503, 9],
    [0, 9],
    [418, 1],
  ])('HTTP %i -> exit %i', (status, exit) => {
    expect(exitCodeForStatus(status)).toBe(exit);
  });
});

describe('CliError', () => {
  it('takes its code from the exit code unless given one', () => {
    expect(new CliError('x', { exitCode: ExitCode.Conflict }).code).toBe('conflict');
    expect(new CliError('x', { exitCode: ExitCode.Usage, code: 'input_not_found' }).code).toBe(
      'input_not_found',
    );
  });
});

describe('toCliError', () => {
  it("turns an oclif parse error into a usage error without oclif's own help line", () => {
    const parseError = Object.assign(new Error('Nonexistent flag: --nope\nSee more help with --help'), {
      parse: {},
      oclif: { exit: 2 },
    });
    const mapped = toCliError(parseError, 'See `gds x --help`.');
    expect(mapped).toMatchObject({ exitCode: 2, code: 'usage', message: 'Unknown flag: --nope.' });
    expect(mapped.suggestion).toBe('See `gds x --help`.');
  });

  it('keeps a CliError as it is and makes anything unexpected a failure (exit 1)', () => {
    const own = new CliError('conflict', { exitCode: ExitCode.Conflict });
    expect(toCliError(own, '')).toBe(own);
    expect(toCliError(new TypeError('boom'), '')).toMatchObject({
      exitCode: 1,
      code: 'internal',
      message: 'boom',
    });
    // ... and says what to do next: the service address, else GDS_DEBUG=1 for a report.
    expect(toCliError(new TypeError('boom'), '').suggestion).toMatch(
      /--base or SERVICE_API_URL.*GDS_DEBUG=1/,
    );
    expect(toCliError('text', '')).toMatchObject({ exitCode: 1, message: 'text' });
  });
});

describe('secrets', () => {
  it('masks a token to its prefix', () => {
    expect(maskToken('cli_0123456789abcdef')).toBe('cli_…****');
    expect(maskToken('opaque')).toBe('****');
  });

  it('removes every occurrence of each secret from a text', () => {
    const text = 'Unexpected argument: cli_secretvalue (cli_secretvalue)';
    expect(redactSecrets(text, ['cli_secretvalue', undefined])).toBe(
      'Unexpected argument: cli_…**** (cli_…****)',
    );
  });

  it('finds the secrets of a process in --token, --token= and SERVICE_TOKEN', () => {
    expect(secretsFrom(['x', '--token', 'cli_aaaa'], {})).toEqual(['cli_aaaa']);
    expect(secretsFrom(['--token=cli_bbbb'], { SERVICE_TOKEN: 'cli_cccc' })).toEqual([
      'cli_bbbb',
      'cli_cccc',
    ]);
    expect(secretsFrom(['x'], {})).toEqual([]);
  });

  it('finds refresh tokens in --refresh-token, --refresh-token= and GDS_REFRESH_TOKEN, not the stdin dash', () => {
    expect(secretsFrom(['--refresh-token', 'rt_1.x'], { GDS_REFRESH_TOKEN: 'rt_2.y' })).toEqual([
      'rt_1.x',
      'rt_2.y',
    ]);
    expect(secretsFrom(['--refresh-token=odd-secret'], {})).toEqual(['odd-secret']);
    expect(secretsFrom(['--refresh-token', '-'], {})).toEqual([]);
  });

  it('finds every --token and --refresh-token given, not only the first', () => {
    expect(
      secretsFrom(
        ['--token', 'a1234567890', '--token=opaque-2', '--refresh-token', 'r-1', '--refresh-token=r-2'],
        {},
      ),
    ).toEqual(['a1234567890', 'opaque-2', 'r-1', 'r-2']);
  });

  it('finds every -H header but the harmless ones (whole, and their value)', () => {
    const harmless = [
      '-H',
      'X-Trace: 1',
      '-H',
      'Accept-Language: json',
      '--header=X-Request-Id: build-1234',
      '-H',
      'content-type:application/json',
      '-H',
      'If-None-Match: "v12"',
      '-H',
      'traceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    ];
    expect(secretsFrom(['api', '/x', ...harmless], {})).toEqual([]);
    const named = [
      ['X-Api-Key: k3y-0f-the-service', 'k3y-0f-the-service'],
      ['proxy-authorization: Basic dXNlcjpwYXNz', 'Basic dXNlcjpwYXNz'],
      ['Cookie: session=abcdef123', 'session=abcdef123'],
      ['Set-Cookie:id=Zx81PlmQwe', 'id=Zx81PlmQwe'],
      ['X-GitHub-Token: ghp_0123456789', 'ghp_0123456789'],
      ['X-Client-Secret: s3cr3t-value', 's3cr3t-value'],
      ['X-DB-Password: hunter2hunter2', 'hunter2hunter2'],
      ['X-Custom-Auth: opaque-value-1', 'opaque-value-1'],
      ['X-My_ApiKey: k-0123456789', 'k-0123456789'],
      // Named by no secret word, yet credentials: every header the harmless list does not know.
      ['Ocp-Apim-Subscription-Key: 0123abcd', '0123abcd'],
      ['X-Functions-Key: fn-k3y-value', 'fn-k3y-value'],
      ['X-Passphrase: correct horse', 'correct horse'],
      ['X-Session-Id: s-981273', 's-981273'],
      ['X-Request-Tag: build-1234', 'build-1234'],
      // A harmless name with a secret word in it.
      ['X-Trace-Token: tt-0123456789', 'tt-0123456789'],
    ];
    expect(secretsFrom(['api', '/x', ...named.flatMap(([header]) => ['-H', header as string])], {})).toEqual(
      named.flat(),
    );
    // Without a colon, its name cannot be told from its value: the whole of it.
    expect(secretsFrom(['api', '/x', '-HNoColonApiKey0123'], {})).toEqual(['NoColonApiKey0123']);
  });

  it('masks a known secret of 4 characters or more whole, and a cut part of one from 8 characters', () => {
    // A short --token is still a credential: never shown whole.
    expect(redactSecrets('token opaq12 sent', ['opaq12'])).toBe('token **** sent');
    expect(redactSecrets('key 12345678 here', ['12345678'])).toBe('key **** here');
    // Under 4 characters it would mask every such letter of the output.
    expect(redactSecrets('page 123 of abc', ['123', 'abc'])).toBe('page 123 of abc');
    // A short secret inside a longer one, given first: the longer one is still masked whole.
    expect(redactSecrets('sent opaqueSecretToken123.', ['Secret', 'opaqueSecretToken123'])).toBe(
      'sent ****.',
    );
    // A cut part of a secret under 8 characters is a word or a number, not the secret.
    expect(redactSecrets('see opaqueSe… and opaqu…', ['opaqueSecretToken123'])).toBe('see **** and opaqu…');
  });

  it('finds the value of a mistyped --tok…/--ref… flag (its error echoes it), not a flag after it', () => {
    expect(secretsFrom(['--tok=opaqueSecretToken123', '--TOKN', 'second-secret', '--ref=r-3'], {})).toEqual([
      'opaqueSecretToken123',
      'second-secret',
      'r-3',
    ]);
    expect(secretsFrom(['--tokn', '--json', '--refresh'], {})).toEqual([]);
  });

  it('masks them in an error message and keeps the rest of the error', () => {
    const error = new CliError('bad value cli_aaaa1234bbbb5678', {
      exitCode: ExitCode.Usage,
      suggestion: 'see help',
    });
    expect(redactError(error, ['--token', 'cli_aaaa1234bbbb5678'])).toMatchObject({
      message: 'bad value cli_…****',
      exitCode: 2,
      code: 'usage',
      suggestion: 'see help',
    });
  });

  it('masks them in the suggestion and the details too', () => {
    const secret = 'opaque-Secret-4711';
    const error = new CliError('refused', {
      exitCode: ExitCode.Failure,
      suggestion: `retry without ${secret}`,
      details: { server: { echo: secret, list: [`x ${secret}`] }, status: 400 },
    });
    expect(redactError(error, ['--token', secret])).toMatchObject({
      message: 'refused',
      suggestion: 'retry without ****',
      details: { server: { echo: '****', list: ['x ****'] }, status: 400 },
    });
  });
});

describe("oclif's parse errors in gds's voice", () => {
  const parseError = (message: string) =>
    Object.assign(new Error(`${message}\nSee more help with --help`), { parse: {}, oclif: { exit: 2 } });

  it('a missing flag is written as typed, without the "following error occurred" heading', () => {
    const mapped = toCliError(
      parseError('The following error occurred:\n  Missing required flag reason'),
      'See `gds reject --help`.',
    );
    expect(mapped).toMatchObject({
      exitCode: 2,
      message: 'Missing required flag --reason.',
      suggestion: 'See `gds reject --help`.',
    });
  });

  it('a flag value off the allowed list suggests the nearest allowed one', () => {
    const mapped = toCliError(
      parseError('Expected --state=CERTIFID to be one of: QUARANTINED, CERTIFIED, CORE'),
      'See `gds list --help`.',
    );
    expect(mapped.message).toBe(
      '--state takes one of QUARANTINED, CERTIFIED, CORE; "CERTIFID" is not one of them.',
    );
    expect(mapped.suggestion).toBe('Did you mean --state CERTIFIED? See `gds list --help`.');
  });

  it('an unknown flag suggests the nearest flag of the command', () => {
    const mapped = toCliError(parseError('Nonexistent flag: --stat'), 'See `gds list --help`.', {
      flagNames: ['state', 'limit', 'json'],
    });
    expect(mapped).toMatchObject({
      message: 'Unknown flag: --stat.',
      suggestion: 'Did you mean --state? See `gds list --help`.',
    });
  });

  it('a missing argument and a bad integer read as sentences', () => {
    expect(toCliError(parseError('Missing 1 required arg:\ntableId  The table id.'), 'x').message).toBe(
      'Missing required argument <tableId>: The table id.',
    );
    expect(
      toCliError(parseError('Parsing --limit \n\tExpected an integer but received: abc'), 'x').message,
    ).toBe('--limit expects an integer, not "abc".');
  });
});

describe('commandSuggestion', () => {
  const ids = ['list', 'status', 'gate:result', 'gate:run', 'gate:diff'];
  it('the nearest command id, or the command whose extra words were arguments', () => {
    expect(commandSuggestion('gate:resutl', ids)).toContain('Did you mean `gds gate result`?');
    expect(commandSuggestion('list:extra', ids)).toBe(
      '`gds list` takes no argument extra: see `gds list --help`.',
    );
    expect(commandSuggestion('zzzzzz', ids)).toBe('Run `gds --help` for the list of commands.');
  });

  it('a typo followed by arguments: the command meant, with the same arguments', () => {
    expect(commandSuggestion('gate:resutl:job_1', ids)).toContain('Did you mean `gds gate result job_1`?');
    expect(commandSuggestion('stauts:tbl_1', ids)).toContain('Did you mean `gds status tbl_1`?');
    expect(commandSuggestion('gate:resutl:j', ids)).toContain('Did you mean `gds gate result j`?');
    expect(commandSuggestion('gat:result:job_1', ids)).toContain('Did you mean `gds gate result job_1`?');
  });

  it("a topic's unknown command is not turned into another command taking it as an argument", () => {
    expect(commandSuggestion('gate:frobnicate:tbl_1', ids)).toBe(
      '`gds gate` has no command frobnicate: see `gds gate --help` for its commands.',
    );
    // `frob` is as far from `gate:jobs`'s `jobs` as a four-letter word can be.
    expect(commandSuggestion('gate:frob:tbl_1', [...ids, 'gate:jobs'])).toBe(
      '`gds gate` has no command frob: see `gds gate --help` for its commands.',
    );
  });
});

describe('unknownCommandWords', () => {
  const ids = ['list', 'status', 'gate:result', 'gate:run', 'records:list'];
  it('names the command words, not the arguments after them', () => {
    expect(unknownCommandWords('gate:frob:tbl_1', ids)).toBe('gate frob');
    expect(unknownCommandWords('frob:tbl_1', ids)).toBe('frob');
    expect(unknownCommandWords('records:lst', ids)).toBe('records lst');
    expect(unknownCommandWords('list:extra', ids)).toBe('list extra');
  });
});
