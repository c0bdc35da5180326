// Every read command of gds (and the writes that say back what the service answered) against a hostile
// service: a proxy in front of the reference server appends terminal control sequences to every string of
// every JSON answer (ids and tokens aside, so that the commands still find what they read), or answers every
// call with an error whose every string carries them. On a terminal (GDS_FORCE_TTY, stdin and stderr a
// terminal) nothing of them reaches stdout or stderr; piped, only the documents gds passes on byte for byte
// (gate get and gate suggest's gate1.yml, records export's rows) keep them; under --json every line of
// stdout and stderr is JSON, those characters escaped.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import { runResultsOf } from '../helpers/certified-copies.js';
import type { TestServer } from '../helpers/server.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import type { RewritingProxy } from '../helpers/rewriting-proxy.js';
import { startTestServer } from './test-server.js';

/** An OSC 8 link to an evil address, clear screen, BEL, backspaces, a carriage return, bidi, a C1 CSI. */
const HOSTILE = '\u001b]8;;http://evil\u0007X\u001b]8;;\u0007\u001b[2J\u0007\b\b\rEVIL\u202e\u2066\u009b31m';
/** Any control or bidi character a terminal would act on (but the line break and the tab). */
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let server: TestServer;
let dir: string;
let proxy: RewritingProxy | undefined;
let proxyUrl: string;
let answer: 'poisoned' | 'error' | 'text' | 'forged' | 'cut' = 'poisoned';
/** Under `cut`: the number of recertify signals answered (FORGED and HOSTILE after their strings) before the
 *  next is cut off by a gateway's 502, its reason phrase and body the service's. */
let signalsLeft = 0;
let jobId = '';
let recordId = '';

/** A line break and a label of gds's own views after it: a line forged under them, were it shown as it is. */
const FORGED = '\nForged:   CERTIFIED by you';

/** `value` with `tail` (HOSTILE) after every string but an id's or a token's. */
function poisoned(value: unknown, key = '', tail = HOSTILE): unknown {
  if (typeof value === 'string') return /^(id|token)$|(Id|Token)$/.test(key) ? value : `${value}${tail}`;
  if (Array.isArray(value)) return value.map((item) => poisoned(item, key, tail));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poisoned(v, k, tail)]));
}

const hostileError = JSON.stringify({
  error: {
    code: `conflict${HOSTILE}`,
    message: `Refused${HOSTILE}`,
    suggestion: `Try again${HOSTILE}`,
    details: {
      reason: `why${HOSTILE}`,
      diagnostics: [
        {
          file: `gate1.yml${HOSTILE}`,
          line: 1,
          column: 2,
          severity: 'error',
          path: `a${HOSTILE}`,
          message: `bad${HOSTILE}`,
          code: `c${HOSTILE}`,
        },
      ],
    },
  },
});

/** The service's answer as the proxy sends it on: the tail `answer` calls for after each string. */
function rewritten(text: string, type: string): string {
  const tail = answer === 'forged' ? FORGED : answer === 'cut' ? `${FORGED}${HOSTILE}` : HOSTILE;
  if (type.includes('json') && text !== '') return JSON.stringify(poisoned(JSON.parse(text), '', tail));
  return text === '' ? text : `${text}${tail}`;
}

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-hostile-sweep-'));
  // What the reads find: a gate1.yml in two versions, a proof, a Gate 2 job, a table waiting for review.
  const direct = (args: string[], input?: string) =>
    runInProcess(args, {
      ...(input === undefined ? {} : { input }),
      env: {
        SERVICE_API_URL: server.url,
        SERVICE_TOKEN: server.user('OWNER').cliToken,
        GDS_CONFIG_DIR: join(dir, 'direct'),
        GDS_SECRET_STORAGE: 'file',
      },
    });
  const orders = server.table('orders').id;
  const gate = (name: string) =>
    `customPredicates:\n  - name: ${name}\n    sql: amount IS NOT NULL\n    severity: WARN\n`;
  expect((await direct(['gate', 'apply', orders, '-f', '-'], gate('amount_known'))).code).toBe(0);
  expect((await direct(['gate', 'apply', orders, '-f', '-'], gate('amount_still_known'))).code).toBe(0);
  const job = await direct(['gate', 'run', orders, '--gate', '2']);
  expect(job.code, job.stderr).toBe(0);
  jobId = job.stdout.trim();
  expect((await direct(['gate', 'run', orders])).code).toBe(0);
  expect((await direct(['gate', 'submit', orders])).code).toBe(0);
  const records = await direct(['records', 'list', server.table('customers').id, '--json']);
  recordId = (JSON.parse(records.stdout.split('\n')[0] ?? '{}') as { id: string }).id;

  proxy = await startRewritingProxy(server.url, {
    rewrite: rewritten,
    intercept: (request, response) => {
      if (answer === 'text') {
        // Not JSON, from a proxy or a broken service: its reason phrase and body are the service's too.
        response.writeHead(request.url?.includes('records') ? 404 : 403, `Nope\u009b2J`, {
          'Content-Type': 'text/html',
        });
        response.end(`<html>${HOSTILE}</html>`);
        return true;
      }
      if (answer === 'cut' && request.method === 'POST' && request.url?.endsWith('/recertify')) {
        signalsLeft -= 1;
        if (signalsLeft < 0) {
          response.writeHead(502, `Bad gateway\u009b2J`, { 'Content-Type': 'text/html' });
          response.end(`<html>${FORGED}${HOSTILE}</html>`);
          return true;
        }
      }
      if (answer === 'error') {
        response.setHeader('Content-Type', 'application/json');
        response.setHeader('X-Request-Id', 'req\u009b2J');
        response.statusCode = request.url?.includes('records') ? 500 : 409;
        response.end(hostileError);
        return true;
      }
      return false;
    },
  });
  proxyUrl = proxy.url;
});

afterAll(async () => {
  // A beforeAll that failed before the proxy listened leaves none to close (a promise on it would never end).
  await proxy?.close();
  await rm(dir, { recursive: true, force: true });
  await server?.close();
});

/** gds through the proxy; `terminal`: stdout, stdin and stderr as on a terminal. */
const gds = (args: string[], terminal: boolean, env: Record<string, string> = {}, input?: string) =>
  runInProcess(args, {
    terminal,
    ...(input === undefined ? {} : { input }),
    env: {
      SERVICE_API_URL: proxyUrl,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      XDG_CACHE_HOME: join(dir, 'cache'),
      GDS_CONFIG_DIR: join(dir, 'config'),
      GDS_SECRET_STORAGE: 'file',
      NO_COLOR: '1',
      ...(terminal ? { GDS_FORCE_TTY: '1' } : {}),
      ...env,
    },
  });

/** The documents gds writes to a pipe as the service gave them (gate-output.ts, records-export.ts). */
const rawWhenPiped = (args: string[]) =>
  ['gate get', 'gate suggest'].includes(args.slice(0, 2).join(' ')) ||
  (args[1] === 'export' && args.includes('csv'));

function reads(): string[][] {
  const orders = server.table('orders').id;
  const customers = server.table('customers').id;
  return [
    ['list'],
    ['status', orders],
    ['status', customers],
    ['whoami'],
    ['auth', 'status'],
    ['audit', 'list'],
    ['review'],
    ['gate', 'get', orders],
    ['gate', 'diff', orders, '--from', 'v1', '--to', 'v2'],
    ['gate', 'jobs', orders],
    ['gate', 'status', jobId, '--gate', '2'],
    ['gate', 'result', jobId],
    ['gate', 'suggest', orders],
    ['versions', 'list', customers],
    ['recertification', 'list'],
    ['records', 'list', customers],
    ['records', 'get', customers, recordId],
    ['records', 'export', customers, '--format', 'csv'],
    ['records', 'export', customers],
    ['tokens', 'list'],
    ['connectors', 'list'],
    ['members', 'list'],
    ['quarantine', 'list'],
    ['config', 'list'],
    ['api', '/api/workspace/members'],
    ['api', '-i', '/api/workspace/members'],
  ];
}

describe('a service whose every string carries terminal control sequences', () => {
  it('reaches no terminal: every read as on a terminal, with GDS_DEBUG too', async () => {
    answer = 'poisoned';
    const leaks: string[] = [];
    for (const args of reads()) {
      if (args[0] === 'review') continue; // on a terminal it asks (test/e2e/review.test.ts walks it)
      for (const env of [{}, { GDS_DEBUG: '1' }] as Array<Record<string, string>>) {
        const r = await gds(args, true, env);
        for (const [stream, text] of [
          ['stdout', r.stdout],
          ['stderr', r.stderr],
        ] as const)
          if (CONTROL.test(text)) leaks.push(`${args.join(' ')} ${stream}: ${JSON.stringify(text)}`);
      }
    }
    expect(leaks).toEqual([]);
    const status = await gds(['status', server.table('orders').id], true);
    expect(status.stdout).toMatch(/^Table: +ordersX EVIL /m);
  });

  it('piped: stderr clean; stdout clean but for the documents passed on as the service gave them', async () => {
    answer = 'poisoned';
    const leaks: string[] = [];
    for (const args of reads()) {
      const r = await gds(args, false);
      if (CONTROL.test(r.stderr)) leaks.push(`${args.join(' ')} stderr: ${JSON.stringify(r.stderr)}`);
      if (rawWhenPiped(args)) {
        if (!r.stdout.includes(HOSTILE)) leaks.push(`${args.join(' ')} stdout not as given`);
      } else if (CONTROL.test(r.stdout)) leaks.push(`${args.join(' ')} stdout: ${JSON.stringify(r.stdout)}`);
    }
    expect(leaks).toEqual([]);
  });

  it('--json: every line of stdout and stderr is JSON, the sequences escaped', async () => {
    answer = 'poisoned';
    const bad: string[] = [];
    for (const args of reads()) {
      // records export refuses --json to stdout (it writes CSV or NDJSON rows there, not records).
      if (args[1] === 'export') continue;
      const r = await gds([...args, '--json'], false);
      for (const [stream, text] of [
        ['stdout', r.stdout],
        ['stderr', r.stderr],
      ] as const) {
        if (CONTROL.test(text)) bad.push(`${args.join(' ')} ${stream}: raw control character`);
        for (const line of text.split('\n').filter((l) => l !== '')) {
          try {
            JSON.parse(line);
          } catch {
            bad.push(`${args.join(' ')} ${stream}: ${JSON.stringify(line)}`);
          }
        }
      }
    }
    expect(bad).toEqual([]);
  });

  it.each(['error', 'text'] as const)(
    "says the service's errors (4xx, 5xx; %s bodies) without them, on a terminal, piped and under --json",
    async (kind) => {
      answer = kind;
      const leaks: string[] = [];
      try {
        for (const args of reads()) {
          for (const [terminal, env] of [
            [true, { GDS_DEBUG: '1' }],
            [false, {}],
          ] as const) {
            const r = await gds(args, terminal, env);
            if (r.code === 0 && args[0] !== 'api') leaks.push(`${args.join(' ')}: exit 0`);
            if (CONTROL.test(r.stdout + r.stderr))
              leaks.push(`${args.join(' ')}: ${JSON.stringify(r.stderr)}`);
          }
          const json = await gds([...args, '--json'], false);
          if (CONTROL.test(json.stdout + json.stderr)) leaks.push(`${args.join(' ')} --json: raw control`);
          for (const line of json.stderr.split('\n').filter((l) => l !== '')) {
            try {
              JSON.parse(line);
            } catch {
              leaks.push(`${args.join(' ')} --json stderr: ${JSON.stringify(line)}`);
            }
          }
        }
      } finally {
        answer = 'poisoned';
      }
      expect(leaks).toEqual([]);
    },
  );

  it('forges no line of a detail view: a line break in a string of the service reads as a space', async () => {
    answer = 'forged';
    const orders = server.table('orders').id;
    const customers = server.table('customers').id;
    const forged: string[] = [];
    // Before the writes below, which delete the record and the table.
    try {
      for (const args of [
        ['status', orders],
        ['status', customers],
        ['whoami'],
        ['auth', 'status'],
        ['gate', 'status', jobId, '--gate', '2'],
        ['gate', 'result', jobId],
        ['records', 'get', customers, recordId],
      ]) {
        for (const terminal of [true, false]) {
          const r = await gds(args, terminal);
          expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
          for (const line of `${r.stdout}\n${r.stderr}`.split('\n'))
            if (line.startsWith('Forged:'))
              forged.push(`${args.join(' ')}${terminal ? ' (terminal)' : ''}: ${JSON.stringify(line)}`);
        }
      }
      // An error's message from the service too (its details stay as sent, shown under it as diagnostics).
      for (const terminal of [true, false]) {
        const r = await gds(['status', 'tbl_0000000000000000'], terminal);
        expect(r.code, r.stderr).toBe(5);
        for (const line of r.stderr.split('\n'))
          if (line.startsWith('Forged:')) forged.push(`status (404): ${JSON.stringify(line)}`);
      }
      expect(forged).toEqual([]);
      // The string is shown whole, on its own line: `Table:  orders Forged:   CERTIFIED by you (tbl_…)`.
      const status = await gds(['status', orders], false);
      expect(status.stdout).toMatch(/^Table: +orders Forged: +CERTIFIED by you \(/m);
      // A record's text value may be multi-line: its next lines stay, indented under the value.
      const record = await gds(['records', 'get', customers, recordId], false);
      expect(record.stdout).toMatch(/\n {3,}Forged: +CERTIFIED by you\n/);
      // Under --json the string is the service's, its line break escaped.
      const json = await gds(['status', orders, '--json'], false);
      expect((JSON.parse(json.stdout) as { name: string }).name).toBe(`orders${FORGED}`);
    } finally {
      answer = 'poisoned';
    }
  });

  it('forges no line of what the writes say back, nor of their notes and errors', async () => {
    answer = 'forged';
    const orders = server.table('orders').id;
    const customers = server.table('customers').id;
    const contacts = server.table('crm_contacts').id;
    const owner = server.user('OWNER').cliToken;
    const forged: string[] = [];
    const bundle = join(dir, 'forged-bundle.json');
    const runResults = join(dir, 'forged-run-results.json');
    await writeFile(runResults, runResultsOf(['customers', 'orders', 'nowhere'], 'inv-forged'));
    const definition = join(dir, 'forged_categories.yml');
    const dev = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    await writeFile(
      definition,
      'table: forged_categories\nsource: analytics_dev.categorydim\ncolumns:\n  - name: category_id\n',
    );
    try {
      for (const [args, input] of [
        [['auth', 'set', '--profile', 'forged', '--base', proxyUrl, '--token', owner]],
        [['gate', 'run', orders]],
        [['gate', 'run', orders, '--gate', '2']],
        [['gate', 'submit', orders, '--if-not-certified']],
        [['review'], ''],
        [['reject', contacts, '--reason', 'not yet']],
        [['quarantine', 'open', contacts, '-o', join(dir, 'forged.sql'), '--force']],
        [['records', 'create', contacts, '-f', '-'], '{"email":"x@example.com","full_name":"X"}'],
        [['tokens', 'issue', '--name', 'forged', '--env', 'dev', '--scope', 'workspace:read:audit']],
        [['env', 'promote', customers, '--to', 'staging', '--bundle-out', bundle, '--force']],
        [['versions', 'restore', customers, '--to', '1', '--reason', 'back']],
        [['recertification', 'dismiss', '--table', customers, '--reason', 'fine']],
        [['recertify', '--run-results', runResults, '--env', 'dev']],
        [['push', definition, '--connector', dev, '--wait', '--interval', '0.1']],
        [['gate', 'submit', customers, '--if-not-certified']],
      ] as Array<[string[], string?]>) {
        for (const terminal of [true, false]) {
          if (terminal && args[0] === 'review') continue; // on a terminal it asks (test/e2e/review.test.ts)
          const r = await gds(args, terminal, {}, input);
          for (const line of `${r.stdout}\n${r.stderr}`.split('\n'))
            if (/^([✓✖⚠ℹ] )?Forged:/u.test(line))
              forged.push(`${args.join(' ')}${terminal ? ' (terminal)' : ''}: ${JSON.stringify(line)}`);
        }
      }
      expect(forged).toEqual([]);
      // The service's strings are said whole, on gds's line: `The token signs in as … Forged: … (OWNER …).`
      const set = await gds(
        ['auth', 'set', '--profile', 'again', '--base', proxyUrl, '--token', owner],
        false,
      );
      expect(set.stderr).toMatch(
        /^The token signs in as owner@example\.com Forged: +CERTIFIED by you \(OWNER /m,
      );
    } finally {
      answer = 'poisoned';
    }
  });

  it('a recertify stopped part-way says what went and what did not, forging no line, on a terminal, piped and under --json', async () => {
    answer = 'cut';
    // 501 tables: two signals (500 and 1), the second cut off by a 502 (it may have been applied).
    const tables = ['customers', ...Array.from({ length: 500 }, (_, i) => `cut_${i}`)].join(',');
    const leaks: string[] = [];
    try {
      for (const json of [false, true]) {
        for (const terminal of json ? [false] : [true, false]) {
          signalsLeft = 1;
          const r = await gds(
            ['recertify', '--tables', tables, '--env', 'dev', ...(json ? ['--json'] : [])],
            terminal,
          );
          const what = `recertify${json ? ' --json' : ''}${terminal ? ' (terminal)' : ''}`;
          expect(r.code, `${what}: ${r.stderr}`).toBe(9);
          expect(r.stdout).toBe('');
          if (CONTROL.test(r.stderr)) leaks.push(`${what}: ${JSON.stringify(r.stderr)}`);
          for (const line of r.stderr.split('\n')) {
            if (/^([✓✖⚠ℹ] )?Forged:/u.test(line)) leaks.push(`${what}: ${JSON.stringify(line)}`);
            if (json && line !== '') {
              const { error } = JSON.parse(line) as { error: { details: Record<string, unknown[]> } };
              expect(error.details['signalled']).toHaveLength(500);
              expect(error.details['unconfirmed']).toHaveLength(1);
            }
          }
          if (!json)
            expect(r.stderr).toMatch(
              /^Error: Part 2 of the 2 signals of this run failed \(.*\)\. 500 of 501 rebuilt tables were signalled .*; the 1 of part 2 may have been/m,
            );
        }
      }
    } finally {
      answer = 'poisoned';
    }
    expect(leaks).toEqual([]);
  });

  it('writes say back what the service answered without them', async () => {
    answer = 'poisoned';
    const orders = server.table('orders').id;
    const customers = server.table('customers').id;
    const leaks: string[] = [];
    for (const args of [
      ['gate', 'run', orders],
      ['gate', 'run', orders, '--gate', '2'],
      ['reject', orders, '--reason', 'not yet'],
      ['quarantine', 'open', customers, '-o', '-'],
      ['records', 'delete', customers, recordId, '--yes'],
      ['delete', customers, '--yes'],
    ]) {
      const r = await gds(args, true);
      if (CONTROL.test(r.stdout + r.stderr))
        leaks.push(`${args.join(' ')}: ${JSON.stringify(r.stdout + r.stderr)}`);
    }
    expect(leaks).toEqual([]);
  });
});
