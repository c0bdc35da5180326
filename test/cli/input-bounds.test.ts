// What gds parses is bounded by the service's own limits before any parser sees it: a
// view of 50,000 columns, a YAML mapping of 12,000 keys and a 1.2 MB gate1.yml end with exit 2 naming the
// limit (they used to hold gds 150 s, 19 s and 8 s: the service takes 262,144 characters of gate1.yml); only regular files are read (a FIFO blocked, a symlink
// to /dev/zero read 673 MB); stdin stays readable, bounded; bytes that are not UTF-8 are refused with
// their offset. Nothing is sent in any of these cases: a local server counts the requests it gets.
// The other inputs are bounded too: `api --input` and `-F key=@file`, `env promote
// --bundle-in` and `recertify --run-results` read at most the service's request body limit (25 MB),
// `recertify --manifest` at most 256 MB (only its reduction is sent), `--token -` at most 16 KiB (a request's
// headers hold no more); a FIFO or a symlink to /dev/zero is refused at once (they blocked or read without end).
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MAX_GATE1_CHARACTERS,
  MAX_MAPPING_KEYS,
  MAX_VIEW_COLUMNS,
  ARTIFACT_BODY_LIMIT_BYTES,
  REQUEST_BODY_LIMIT_BYTES,
  TOKEN_READ_LIMIT_BYTES,
} from '../../src/core/artifact-bounds.js';
import { runInProcess } from '../helpers/run-in-process.js';

let dir: string;
const file = (name: string) => join(dir, name);
let server: Server;
let requests = 0;
let base: string;

/** A view of `columns` columns, one a line (the issue's 589 KB view has 50,000). */
const wideView = (columns: number) =>
  `CREATE VIEW analytics_dev.wide AS SELECT\n${Array.from({ length: columns }, (_, i) => `  column_${i}`).join(',\n')}\nFROM analytics_dev.products\n`;
/** A YAML artifact whose one mapping has 12,000 keys (about 298 KB). */
const bigMapping = `table: wide\nsource: analytics_dev.products\ncolumns:\n  - name: id\nmeta:\n${Array.from({ length: 12_000 }, (_, i) => `  key_number_${String(i).padStart(5, '0')}: a value\n`).join('')}`;
/** A gate1.yml of 16,000 checks, 1.3 MB. */
const bigGate1 = `customPredicates:\n${Array.from(
  { length: 16_000 },
  (_, i) => `  - name: check_${i}\n    sql: amount >= 0 and amount < 100000\n    severity: WARN\n`,
).join('')}`;
/**
 * A view of 1.9 MiB, under the 2 MiB the service takes of a definition's request body, whose comments' quotes
 * and line ends are escaped in that body's JSON (`\"`, `\n`): 2.5 MiB sent.
 */
const commentLine = `-- ${'"why" '.repeat(16)}\n`;
const commentedView = `CREATE VIEW analytics_dev.commented AS SELECT id FROM analytics_dev.products\n${commentLine.repeat(
  Math.floor((1.9 * 1024 * 1024) / commentLine.length),
)}`;
const gate1Mapping = `patternChecks: []\nx:\n${Array.from({ length: 12_000 }, (_, i) => `  k${i}: v\n`).join('')}`;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gds-bounds-'));
  server = createServer((request, response) => {
    requests++;
    request.resume();
    response.writeHead(500, { 'content-type': 'application/json' });
    response.end('{"error":{"code":"unexpected","message":"no request was expected"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await Promise.all([
    writeFile(file('wide.sql'), wideView(50_000)),
    writeFile(file('mapping.yml'), bigMapping),
    writeFile(file('gate1-big.yml'), bigGate1),
    writeFile(file('gate1-mapping.yml'), gate1Mapping),
    writeFile(file('gate1-ok.yml'), 'patternChecks: []\n'),
    writeFile(file('commented.sql'), commentedView),
    writeFile(file('gate1-300k.yml'), `# ${'x'.repeat(300_000)}\npatternChecks: []\n`),
    writeFile(file('gate1-5m.yml'), `# ${'x'.repeat(5 * 1024 * 1024)}\npatternChecks: []\n`),
    writeFile(
      file('latin1.yml'),
      Buffer.from('table: lat\xe9\nsource: s.t\ncolumns:\n  - name: id\n', 'latin1'),
    ),
    symlink('/dev/zero', file('zero.sql')),
    writeFile(
      file('run_results.json'),
      JSON.stringify({
        metadata: { dbt_schema_version: 'https://schemas.getdbt.com/dbt/run-results/v6.json' },
        results: [
          { unique_id: 'model.shop.customers', status: 'success', relation_name: '"db"."dev"."customers"' },
        ],
      }),
    ),
  ]);
  execFileSync('mkfifo', [file('fifo.sql'), file('fifo.yml')]);
});

afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

const cli = (args: string[], input?: string) =>
  runInProcess([...args, '--token', 'cli_bounds_test', '--base', base], {
    env: { GDS_CONFIG_DIR: join(dir, 'config') },
    ...(input === undefined ? {} : { input }),
  });

describe('gds refuses what the service would refuse unparsed, before parsing and sending it', () => {
  it('push of a view of 50,000 columns: exit 2 naming PostgreSQL’s 1,600-column limit, nothing sent', async () => {
    const before = requests;
    const r = await cli(['push', file('wide.sql')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`more than ${MAX_VIEW_COLUMNS.toLocaleString('en')} columns (50,000 listed)`);
    expect(requests).toBe(before);
  });

  it('definitions push of the same view: exit 2, nothing sent', async () => {
    const before = requests;
    const r = await cli(['definitions', 'push', file('wide.sql'), '--connector', 'c_1', '--json']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const line = JSON.parse(r.stderr.trim()) as { error: { code: string; details: Record<string, unknown> } };
    expect(line.error).toMatchObject({
      code: 'artifact_too_large',
      details: { columns: 50_000, limit: MAX_VIEW_COLUMNS },
    });
    expect(requests).toBe(before);
  });

  it.each([
    ['push', []],
    ['definitions push', ['--connector', 'c_1']],
  ])(
    '%s of a 1.9 MiB view whose request body is 2.5 MiB (its quotes and line ends escaped): exit 2, nothing sent',
    async (words, rest) => {
      expect(Buffer.byteLength(commentedView)).toBeLessThan(ARTIFACT_BODY_LIMIT_BYTES);
      const before = requests;
      const r = await cli([...words.split(' '), file('commented.sql'), ...rest, '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const line = JSON.parse(r.stderr.trim()) as { error: { code: string; message: string } };
      expect(line.error.code).toBe('input_too_large');
      expect(line.error.message).toMatch(
        /bytes, [\d,]+ as the request's JSON .*over the limit of 2,097,152 bytes/,
      );
      expect(requests).toBe(before);
    },
  );

  it.each([['push --dry-run'], ['push']])(
    '%s of a view whose text is just under 2 MiB as a JSON string, the request body over it: exit 2, nothing sent',
    async (words) => {
      // The text alone, JSON-escaped, is 8 bytes under the limit; the body around it (filename, mimeType, …)
      // carries it over.
      const head = 'CREATE VIEW analytics_dev.edge AS SELECT id FROM analytics_dev.products\n-- ';
      const view = `${head}${'x'.repeat(ARTIFACT_BODY_LIMIT_BYTES - 8 - JSON.stringify(head).length - 2)}\n`;
      expect(Buffer.byteLength(JSON.stringify(view))).toBe(ARTIFACT_BODY_LIMIT_BYTES - 8);
      await writeFile(file('edge.sql'), view);
      const before = requests;
      const r = await cli([...words.split(' '), file('edge.sql'), '--json']);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stdout).toBe('');
      const { error } = JSON.parse(r.stderr.trim()) as {
        error: { code: string; message: string; suggestion: string; details: object };
      };
      expect(error.code).toBe('input_too_large');
      expect(error.message).toMatch(
        /edge\.sql is [\d,]+ bytes as the request's JSON \(its text escaped, with the fields sent beside it\), over the limit of [\d,]+ bytes for the artifact\.$/,
      );
      expect(error.suggestion).toMatch(
        /^The service takes at most [\d,]+ bytes for the artifact; nothing was sent\./,
      );
      expect(Object.keys(error.details)).toEqual(['file', 'sentBytes', 'limit']);
      expect(requests).toBe(before);
    },
  );

  it('push of a YAML mapping of 12,000 keys (298 KB): exit 2 naming the 1,000-key limit', async () => {
    const r = await cli(['push', file('mapping.yml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`has 12,000 keys, over the limit of ${MAX_MAPPING_KEYS.toLocaleString('en')}`);
  });

  it('gate validate of a 1.3 MB gate1.yml: exit 2 naming the 262,144-character limit', async () => {
    const r = await cli(['gate', 'validate', '-f', file('gate1-big.yml')]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      `The gate1.yml is 1,300,908 characters long, over the limit of ${MAX_GATE1_CHARACTERS.toLocaleString('en')} characters`,
    );
  });

  it('gate validate of a 300 KB gate1.yml: exit 2 naming the limit in characters', async () => {
    const r = await cli(['gate', 'validate', '-f', file('gate1-300k.yml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is 300,021 characters long, over the limit of 262,144 characters');
  });

  it('gate validate of a gate1.yml mapping of 12,000 keys: exit 2 naming the limit', async () => {
    const r = await cli(['gate', 'validate', '-f', file('gate1-mapping.yml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('has 12,000 keys, over the limit of 1,000');
  });

  it('gate validate -f - reads stdin, bounded: a small file passes, 1.3 MB is refused', async () => {
    const ok = await cli(['gate', 'validate', '-f', '-'], 'patternChecks: []\n');
    expect(ok.code).toBe(0);
    const big = await cli(['gate', 'validate', '-f', '-'], bigGate1);
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('<stdin>: The gate1.yml is 1,300,908 characters long');
    // Past 6 bytes a character (a JSON record's escapes), stdin is not read further.
    const huge = await cli(['gate', 'validate', '-f', '-'], bigGate1 + bigGate1);
    expect(huge.code).toBe(2);
    expect(huge.stderr).toContain('<stdin> is over the limit of 262,144 characters');
  });

  it('gate apply of a 1.3 MB gate1.yml: exit 2, nothing sent', async () => {
    const before = requests;
    const r = await cli(['gate', 'apply', 't_1', '-f', file('gate1-big.yml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('over the limit of 262,144 characters');
    expect(requests).toBe(before);
    const record = JSON.stringify({ tableId: 't_1', yaml: bigGate1 });
    const piped = await cli(['gate', 'apply', 't_1', '-f', '-'], record);
    expect(piped.code).toBe(2);
    expect(piped.stderr).toContain('The gate1.yml is 1,300,908 characters long');
    expect(requests).toBe(before);
  });

  it('gate diff refuses an over-bound gate1.yml as gate validate does, either side, with the same error', async () => {
    const validate = await cli(['gate', 'validate', '-f', file('gate1-big.yml'), '--json']);
    expect(validate.code).toBe(2);
    const refusal = JSON.parse(validate.stderr.trim()) as { error: { code: string; message: string } };
    expect(refusal.error.code).toBe('gate1_too_large');
    expect(refusal.error.message).toContain('is 1,300,908 characters long, over the limit of 262,144');
    for (const semantic of [[], ['--semantic']]) {
      const after = await cli([
        'gate',
        'diff',
        '-f',
        file('gate1-big.yml'),
        '--against',
        file('gate1-ok.yml'),
        ...semantic,
        '--json',
      ]);
      expect(after.code).toBe(2);
      expect(after.stdout).toBe('');
      expect(JSON.parse(after.stderr.trim())).toEqual(refusal);
      const before = await cli([
        'gate',
        'diff',
        '-f',
        file('gate1-ok.yml'),
        '--against',
        file('gate1-big.yml'),
        ...semantic,
      ]);
      expect(before.code).toBe(2);
      expect(before.stderr).toContain(refusal.error.message);
    }
    const huge = await cli(['gate', 'diff', '-f', file('gate1-ok.yml'), '--against', file('gate1-5m.yml')]);
    expect(huge.code).toBe(2);
    const validateHuge = await cli(['gate', 'validate', '-f', file('gate1-5m.yml')]);
    expect(huge.stderr).toBe(validateHuge.stderr);
    expect(huge.stderr).toContain('over the limit of 262,144 characters');
    const mapping = await cli([
      'gate',
      'diff',
      '-f',
      file('gate1-mapping.yml'),
      '--against',
      file('gate1-ok.yml'),
    ]);
    expect(mapping.code).toBe(2);
    expect(mapping.stderr).toContain('has 12,000 keys, over the limit of 1,000');
  });

  it('push of a FIFO ends at once with exit 2 (it used to wait for a writer forever)', async () => {
    const r = await cli(['push', file('fifo.sql')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a FIFO (named pipe), not a regular file');
    const gate = await cli(['gate', 'validate', '-f', file('fifo.yml')]);
    expect(gate.code).toBe(2);
  });

  it('push of a symlink to /dev/zero: exit 2, not a read of hundreds of MB', async () => {
    const r = await cli(['push', file('zero.sql')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('is a character device, not a regular file');
  });

  it('push of an artifact that is not UTF-8: exit 2 with the byte offset, nothing sent', async () => {
    const before = requests;
    const r = await cli(['push', file('latin1.yml'), '--json']);
    expect(r.code).toBe(2);
    const line = JSON.parse(r.stderr.trim()) as {
      error: { code: string; message: string; details: unknown };
    };
    expect(line.error.code).toBe('input_not_utf8');
    expect(line.error.message).toContain('byte 10 (line 1) is 0xE9');
    expect(line.error.details).toMatchObject({ byteOffset: 10, line: 1 });
    expect(requests).toBe(before);
  });
});

const bodyLimit = `${REQUEST_BODY_LIMIT_BYTES.toLocaleString('en')} bytes`;

describe('the other inputs gds reads are bounded too: a file or a pipe, up to the service’s limits', () => {
  const devices: Array<[string, (path: string) => string[]]> = [
    ['api --input', (path) => ['api', '/api/me', '--method', 'POST', '--input', path]],
    ['api -F key=@file', (path) => ['api', '/api/me', '--method', 'POST', '-F', `k=@${path}`]],
    [
      'env promote --bundle-in',
      (path) => ['env', 'promote', 'tbl_1', '--to', 'staging', '--bundle-in', path],
    ],
    [
      'recertify --manifest',
      (path) => ['recertify', '--run-results', file('run_results.json'), '--env', 'dev', '--manifest', path],
    ],
    ['recertify --run-results', (path) => ['recertify', '--run-results', path, '--env', 'dev']],
  ];
  for (const [what, args] of devices) {
    it(`${what}: a symlink to /dev/zero and a FIFO are refused at once (exit 2), nothing sent`, async () => {
      const before = requests;
      const zero = await cli(args(file('zero.sql')));
      expect(zero.code).toBe(2);
      expect(zero.stderr).toContain('a character device, not a regular file');
      const fifo = await cli(args(file('fifo.sql')));
      expect(fifo.code).toBe(2);
      expect(fifo.stderr).toContain('a FIFO (named pipe), not a regular file');
      expect(requests).toBe(before);
    });
  }

  it('api --input - reads a pipe up to the request body limit: one byte more is exit 2 naming it', async () => {
    const before = requests;
    const r = await cli(
      ['api', '/api/me', '--method', 'POST', '--input', '-', '--json'],
      'x'.repeat(REQUEST_BODY_LIMIT_BYTES + 1),
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    const line = JSON.parse(r.stderr.trim()) as { error: { code: string; message: string } };
    expect(line.error.code).toBe('input_too_large');
    expect(line.error.message).toContain(bodyLimit);
    expect(requests).toBe(before);
  });

  it('env promote --bundle-in - over the limit: exit 2 naming it', async () => {
    const r = await cli(
      ['env', 'promote', 'tbl_1', '--to', 'staging', '--bundle-in', '-'],
      ' '.repeat(REQUEST_BODY_LIMIT_BYTES + 10),
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`over the limit of ${bodyLimit} for a bundle`);
  });

  it('auth set --token - reads at most 16 KiB: a longer pipe is exit 2 naming the limit, nothing saved', async () => {
    const r = await runInProcess(['auth', 'set', '--token', '-', '--base', base, '--no-verify'], {
      env: { GDS_CONFIG_DIR: join(dir, 'config-set'), GDS_SECRET_STORAGE: 'file' },
      input: 'c'.repeat(TOKEN_READ_LIMIT_BYTES + 1),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `over the limit of ${TOKEN_READ_LIMIT_BYTES.toLocaleString('en')} bytes for a token`,
    );
    const listed = await runInProcess(['auth', 'status', '--json'], {
      env: { GDS_CONFIG_DIR: join(dir, 'config-set'), GDS_SECRET_STORAGE: 'file' },
    });
    expect(listed.stdout).not.toContain('ccccccccc');
  });

  it('auth set --token - still reads a token from a pipe', async () => {
    const r = await runInProcess(
      ['auth', 'set', '--token', '-', '--base', base, '--no-verify', '--profile', 'piped'],
      {
        env: { GDS_CONFIG_DIR: join(dir, 'config-ok'), GDS_SECRET_STORAGE: 'file' },
        input: 'cli_piped_token_0123456789\n',
      },
    );
    expect(r.stderr).not.toContain('over the limit');
    expect(r.code).toBe(0);
  });
});
