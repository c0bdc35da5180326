// A service's string shown inside a line of gds's own (a detail view's `Table:  orders`, the e-mail of
// `whoami`, a table cell, an error's message and its diagnostics, gate suggest's `# …` comment lines, the lines
// of `status --watch` and `gate status --watch`, the request `versions restore` filed) stays on
// that line, whichever line break or separator it carries (\n, \r, U+2028): each run of them reads as one
// space (onOneLine, src/core/terminal-text.ts), so that no string of the service starts a line that reads as
// gds's (`Forged: CERTIFIED`, `✓ …`, `Warning: …`), and the words it divides stay apart. Under --json the
// string is the service's, whole, its separators escaped.
import { mkdtemp, rm } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startRewritingProxy } from '../helpers/rewriting-proxy.js';
import type { RewritingProxy } from '../helpers/rewriting-proxy.js';
import { startTestServer } from './test-server.js';
import { needs, noTerminalStandIn, noTmux } from '../helpers/skip.js';
import { startTerminal } from '../helpers/tmux.js';
import type { Terminal } from '../helpers/tmux.js';
import { cliCommand, cliEnv, ensureBuilt } from '../cli/helpers/cli-process.js';

/** What each string of the service ends with: a separator, then what would read as a line of gds's. */
const forged = (separator: string) => `${separator}Forged: CERTIFIED`;
/** A line of gds's output that a service's string started. */
const FORGED_LINE = /^\W*Forged:/u;

let server: TestServer;
let dir: string;
let proxy: RewritingProxy | undefined;
let tail = forged('\n');
let answerError = false;
/**
 * Answers still to change, by the path they answer (`/api/tables/tbl_…/status`): each a change made to the
 * service's poisoned answer (a job still active); once they are used up the answers are the service's.
 */
const changed = new Map<string, Array<(answer: Record<string, unknown>) => Record<string, unknown>>>();
/** Whether only the id of a recertification request the service filed carries the tail (gds shows it, acts on none). */
let onlyRequestIds = false;

/** `value` with `tail` after every string but an id's, a token's or a table's mode (which gds acts on). */
function poisoned(value: unknown, key = ''): unknown {
  const kept = onlyRequestIds
    ? key !== 'recertificationRequestId'
    : /^(id|token|mode)$|(Id|Token)$/.test(key);
  if (typeof value === 'string') return kept ? value : `${value}${tail}`;
  if (Array.isArray(value)) return value.map((item) => poisoned(item, key));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, poisoned(v, k)]));
}

/** A 409 whose every string ends with the tail, a gate1.yml diagnostic among its details. */
const conflict = () =>
  JSON.stringify(
    poisoned({
      error: {
        code: 'conflict',
        message: 'Refused',
        details: {
          reason: 'why',
          diagnostics: [
            {
              file: 'gate1.yml',
              line: 1,
              column: 2,
              severity: 'error',
              path: 'a',
              message: 'bad',
              code: 'c',
            },
          ],
        },
      },
    }),
  );

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-one-line-'));
  // A second table named customers, in production: a name that denotes two tables lists them.
  await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [
    server.table('customers_production').id,
    'customers',
  ]);
  proxy = await startRewritingProxy(server.url, {
    rewrite: (text, type) =>
      type.includes('json') && text !== '' ? JSON.stringify(poisoned(JSON.parse(text))) : text,
    intercept: (request, response) => {
      const path = new URL(request.url ?? '/', 'http://proxy').pathname.replace(/^.*(?=\/api\/)/, '');
      const change = changed.get(path)?.shift();
      if (change !== undefined) {
        answerChanged(request, response, change);
        return true;
      }
      if (!answerError) return false;
      response.writeHead(409, { 'Content-Type': 'application/json' }).end(conflict());
      return true;
    },
  });
});

/** The service's own answer to `request`, poisoned, then changed by `change` (what gds acts on kept clean). */
function answerChanged(
  request: IncomingMessage,
  response: ServerResponse,
  change: (answer: Record<string, unknown>) => Record<string, unknown>,
): void {
  const origin = new URL(server.url).origin;
  fetch(`${origin}${request.url ?? '/'}`, { headers: { authorization: request.headers.authorization ?? '' } })
    .then(async (answered) => {
      const body = change(poisoned(await answered.json()) as Record<string, unknown>);
      response.writeHead(answered.status, { 'Content-Type': 'application/json' });
      response.end(JSON.stringify(body));
    })
    .catch(() => response.writeHead(502).end());
}

// A first run piped: oclif's error module measures stdout as it loads, and a terminal's stand-in has no size
// to give (the files that run a terminal first run a piped command first too).
beforeAll(async () => {
  expect((await gds(['--version'])).code).toBe(0);
});

afterAll(async () => {
  await proxy?.close();
  await rm(dir, { recursive: true, force: true });
  await server?.close();
});

/** What gds runs with: the proxy as its service, the owner's token, its settings under `dir`. */
function gdsEnv(): Record<string, string> {
  const env: Record<string, string> = { NO_COLOR: '1', GDS_SECRET_STORAGE: 'file' };
  env['SERVICE_API_URL'] = proxy?.url ?? '';
  env['SERVICE_TOKEN'] = server.user('OWNER').cliToken;
  env['GDS_CONFIG_DIR'] = join(dir, 'config');
  env['XDG_CACHE_HOME'] = join(dir, 'cache');
  return env;
}

/** gds through the proxy; `terminal`: stdout, stdin and stderr as on a terminal; `input`: its stdin. */
function gds(args: string[], terminal = false, input?: string) {
  const env = gdsEnv();
  if (terminal) env['GDS_FORCE_TTY'] = '1';
  return runInProcess(args, { terminal, env, ...(input === undefined ? {} : { input }) });
}

/**
 * A real gds (the single executable under GDS_TEST_CLI) through the proxy in a real terminal of 100 columns
 * (tmux); a shell after it prints its exit status on the screen.
 */
async function inTerminal(args: string[]): Promise<Terminal> {
  await ensureBuilt();
  const [command, argv] = cliCommand(args);
  return startTerminal(['sh', '-c', '"$0" "$@"; echo "[exit $?]"', command, ...argv], {
    width: 100,
    height: 30,
    env: cliEnv(gdsEnv()),
  });
}

/** The lines of stdout and stderr that a service's string started. */
const forgedLines = (r: { stdout: string; stderr: string }) =>
  `${r.stdout}\n${r.stderr}`.split('\n').filter((line) => FORGED_LINE.test(line));

describe.each([
  ['a line break', '\n'],
  ['a carriage return', '\r'],
  ['CR LF', '\r\n'],
  ['a line separator (U+2028)', '\u2028'],
])("a service's strings ending with %s", (name, separator) => {
  const shown = 'Forged: CERTIFIED';

  it('stay on their line of a detail view, piped and on a terminal: the separator reads as a space', async () => {
    tail = forged(separator);
    const orders = server.table('orders').id;
    for (const terminal of [false, true]) {
      const status = await gds(['status', orders], terminal);
      expect(status.code, status.stderr).toBe(0);
      expect(forgedLines(status)).toEqual([]);
      expect(status.stdout).toMatch(new RegExp(`^Table: +orders ${shown} \\(${orders}\\)$`, 'm'));
      // The e-mail of the person signed in, as whoami and auth status say it.
      for (const args of [['whoami'], ['auth', 'status']]) {
        const r = await gds(args, terminal);
        expect(r.code, r.stderr).toBe(0);
        expect(forgedLines(r)).toEqual([]);
        expect(r.stdout).toContain(`owner@example.com ${shown}`);
      }
    }
    // Under --json the string is the service's, whole.
    const json = await gds(['status', orders, '--json']);
    expect((JSON.parse(json.stdout) as { name: string }).name).toBe(`orders${forged(separator)}`);
  });

  it('stay in their cell of a list: the name of a table, the owner, a connector, a member', async () => {
    tail = forged(separator);
    for (const args of [['list'], ['connectors', 'list'], ['members', 'list']]) {
      const r = await gds(args);
      expect(r.code, r.stderr).toBe(0);
      expect(forgedLines(r)).toEqual([]);
      expect(r.stdout).toContain(shown);
    }
    const list = await gds(['list']);
    expect(list.stdout).toMatch(new RegExp(`\\torders ${shown}\\t`));
  });

  it("say an error's message and its diagnostics on gds's lines", async () => {
    tail = forged(separator);
    answerError = true;
    try {
      for (const terminal of [false, true]) {
        const r = await gds(['status', server.table('orders').id], terminal);
        expect(r.code).toBe(6);
        expect(forgedLines(r)).toEqual([]);
        expect(r.stderr).toMatch(new RegExp(`^Error: Refused ${shown}`, 'm'));
        expect(r.stderr).toMatch(
          new RegExp(`^ {2}gate1\\.yml ${shown}:1:2 error ${shown} a ${shown}: bad`, 'm'),
        );
      }
      // Under --json the message is the service's, whole, its separator escaped by JSON.
      const json = await gds(['status', server.table('orders').id, '--json']);
      expect(json.code).toBe(6);
      const { error } = JSON.parse(json.stderr.trim().split('\n').at(-1) ?? '') as {
        error: { message: string };
      };
      expect(error.message).toBe(`Refused${forged(separator)}`);
    } finally {
      answerError = false;
    }
  });

  it('stay on the line of a view a write says back, and of a refusal gds words', async () => {
    tail = forged(separator);
    // A meaning of its own each time: the same one again is no change, and no view.
    const meaning = `meant for ${name}`;
    const contract = await gds([
      'contract',
      'set-intent',
      server.table('customers').id,
      '--meaning',
      meaning,
    ]);
    expect(contract.code, contract.stderr).toBe(0);
    expect(forgedLines(contract)).toEqual([]);
    expect(contract.stdout).toContain(`  meaning:           ${meaning} ${shown}\n`);
    // A row that does not fit: gds says so before sending it, naming the table and columns as the service does.
    const refused = await gds(
      ['records', 'import', server.table('crm_contacts').id, '-f', '-'],
      false,
      '{"a":1}\n',
    );
    expect(refused.code).not.toBe(0);
    expect(forgedLines(refused)).toEqual([]);
    expect(refused.stderr).toContain(`The row does not fit table crm_contacts ${shown}: `);
    // customers is connector-backed (Mode A): gds refuses to import into it before a row is read.
    const modeA = await gds(
      ['records', 'import', server.table('customers').id, '-f', '-'],
      false,
      '{"a":1}\n',
    );
    expect(modeA.code).toBe(7);
    expect(forgedLines(modeA)).toEqual([]);
    expect(modeA.stderr).toMatch(new RegExp(`^Error: Table customers ${shown} is a Mode A`, 'm'));
  });

  it("keep records import's refusals of a header or --key on their lines, the table's columns too", async () => {
    tail = forged(separator);
    const crm = server.table('crm_contacts').id;
    const csv = await gds(['records', 'import', crm, '-f', '-', '--format', 'csv'], false, 'nope\n1\n');
    expect(csv.code).toBe(2);
    expect(forgedLines(csv)).toEqual([]);
    expect(csv.stderr).toMatch(
      new RegExp(`^Error: The CSV header names columns crm_contacts ${shown} does not have: nope\\.$`, 'm'),
    );
    expect(csv.stderr).toMatch(new RegExp(`^Its columns are email ${shown}, `, 'm'));
    const key = await gds(['records', 'import', crm, '-f', '-', '--key', 'nope'], false, '{"a":1}\n');
    expect(key.code).toBe(2);
    expect(forgedLines(key)).toEqual([]);
    expect(key.stderr).toMatch(
      new RegExp(`^Error: --key nope is not a column of crm_contacts ${shown}\\.$`, 'm'),
    );
    expect(key.stderr).toMatch(new RegExp(`^Pick a column that identifies a row: email ${shown}, `, 'm'));
  });

  it("keep a table's environments on the line suggesting its --env, and a CSV's columns on its", async () => {
    tail = forged(separator);
    const wrongEnv = await gds(['status', 'crm_contacts', '--env', 'production']);
    expect(wrongEnv.code).toBe(5);
    expect(forgedLines(wrongEnv)).toEqual([]);
    expect(wrongEnv.stderr).toMatch(new RegExp(`^crm_contacts is in dev ${shown}: pass that --env`, 'm'));
    const crm = server.table('crm_contacts').id;
    const unnamed = await gds(
      ['records', 'import', crm, '-f', '-', '--format', 'csv'],
      false,
      ',email\n1,2\n',
    );
    expect(unnamed.code).toBe(2);
    expect(forgedLines(unnamed)).toEqual([]);
    expect(unnamed.stderr).toMatch(new RegExp(`^Name every column \\(email ${shown}, `, 'm'));
  });

  it('list the tables a name denotes, each on its line', async () => {
    tail = forged(separator);
    const r = await gds(['status', 'customers']);
    expect(r.code).toBe(2);
    expect(forgedLines(r)).toEqual([]);
    expect(r.stderr).toMatch(/^Error: 2 tables are named customers:$/m);
    expect(r.stderr).toMatch(new RegExp(`^ {2}tbl_\\w+ {2}production ${shown} {2}\\w+ ${shown}$`, 'm'));
  });

  it('stay on the line of a question', needs(noTerminalStandIn), async () => {
    tail = forged(separator);
    const customers = server.table('customers').id;
    const r = await gds(['delete', customers], true, 'n\n');
    expect(r.code).toBe(1);
    // Inquirer wraps the question at the terminal's 80 columns: its first line holds these words.
    expect(r.stderr).toMatch(new RegExp(`^\\? Delete customers ${shown} \\(${customers}, CERTIFIED `, 'm'));
    expect(r.stderr).not.toMatch(/^\W*Forged:/mu);
    // What it says after the answer (after Inquirer shows the cursor again), the table's name on its line too.
    expect(r.stderr).toMatch(
      new RegExp(`Error: Not deleted: customers ${shown} \\(${customers}\\) is unchanged\\.$`, 'm'),
    );
  });

  it(
    'stay on the line of a question on a real terminal (the executable too), and so does the answer',
    needs(noTmux),
    async () => {
      tail = forged(separator);
      const customers = server.table('customers').id;
      const term = await inTerminal(['delete', customers]);
      try {
        await term.waitFor(/\(y\/N\)/);
        await term.send('n', 'Enter');
        await term.waitFor(/\[exit \d+\]/);
        // All of it: tmux scrolls the question's first line up as Inquirer erases and redraws its lines.
        const screen = await term.scrollback();
        expect(screen).toMatch(/^\[exit 1\]$/m);
        expect(screen).toMatch(new RegExp(`^. Delete customers ${shown} \\(${customers}, CERTIFIED `, 'm'));
        expect(screen).not.toMatch(/^\W*Forged:/mu);
        expect(screen).toMatch(
          new RegExp(`^Error: Not deleted: customers ${shown} \\(${customers}\\) is unchanged\\.$`, 'm'),
        );
      } finally {
        await term.close();
      }
    },
  );

  it("keep status --watch's lines on theirs: each change while a job runs, and the end", async () => {
    tail = forged(separator);
    const orders = server.table('orders').id;
    const job = (status: string) => (answer: Record<string, unknown>) => ({
      ...answer,
      activeJobs: [{ id: 'job_watch', type: 'gate-2', status, createdAt: '2026-01-01T00:00:00.000Z' }],
    });
    changed.set(`/api/tables/${orders}/status`, [job('QUEUED'), job('RUNNING')]);
    try {
      const r = await gds(['status', orders, '--watch', '--interval', '0.1']);
      expect(r.code, r.stderr).toBe(0);
      expect(forgedLines(r)).toEqual([]);
      expect(r.stdout).toMatch(
        new RegExp(`^\\S+ {2}[A-Z]+ ${shown} {2}jobs: job_watch gate-2 RUNNING$`, 'm'),
      );
      expect(r.stderr).toMatch(new RegExp(`^\\S+ {2}[A-Z]+ ${shown} {2}no active job\\.$`, 'm'));
    } finally {
      changed.clear();
    }
  });

  it("keep gate status --watch's last line on its: how the job ended", async () => {
    tail = forged(separator);
    const run = await gds(['gate', 'run', server.table('orders').id, '--gate', '2', '--json']);
    expect(run.code, run.stderr).toBe(0);
    const { id } = JSON.parse(run.stdout) as { id: string };
    // The first answer: the job still running, so that the watch sees it end.
    changed.set(`/api/gate-jobs/${id}`, [(answer) => ({ ...answer, status: 'RUNNING', finishedAt: null })]);
    try {
      const r = await gds(['gate', 'status', id, '--gate', '2', '--watch', '--interval', '0.1']);
      expect(r.code, r.stderr).toBe(0);
      expect(forgedLines(r)).toEqual([]);
      expect(r.stderr).toMatch(new RegExp(`^\\S+ {2}Job ${id} ended [A-Z]+ ${shown}\\.$`, 'm'));
    } finally {
      changed.clear();
    }
  });

  it("keep gate suggest's comment lines comments", async () => {
    tail = forged(separator);
    const r = await gds(['gate', 'suggest', server.table('orders').id]);
    expect(r.code, r.stderr).toBe(0);
    const comments = r.stderr.split('\n').filter((line) => line !== '');
    expect(comments.length).toBeGreaterThan(0);
    for (const line of comments) expect(line).toMatch(/^# /);
    // The separator reads as a space, not deleted: the words beside it stay apart.
    expect(comments.some((line) => line.includes(` ${shown}`))).toBe(true);
  });
});

// Last: a gate1.yml applied to, or a version restored on, a CERTIFIED table files a recertification request
// (the table's state moves); its id is the only string of the service's answer with the tail.
describe.each([
  ['a line break', '\n'],
  ['a line separator (U+2028)', '\u2028'],
])('the recertification request filed, its id ending with %s', (_name, separator) => {
  /** What `args` prints, `tail` after the request's id alone. */
  async function filing(args: string[], input?: string) {
    tail = forged(separator);
    onlyRequestIds = true;
    try {
      const r = await gds(args, false, input);
      expect(r.code, r.stderr).toBe(0);
      expect(forgedLines(r)).toEqual([]);
      return r;
    } finally {
      onlyRequestIds = false;
    }
  }

  it('stays on the line gate apply says it on', async () => {
    const predicate = `email_known_${separator === '\n' ? 'lf' : 'ls'}`;
    const r = await filing(
      ['gate', 'apply', server.table('crm_contacts').id, '-f', '-'],
      `customPredicates:\n  - name: ${predicate}\n    sql: email IS NOT NULL\n    severity: WARN\n`,
    );
    expect(r.stderr).toMatch(
      /^The table is CERTIFIED: recertification request \S+ Forged: CERTIFIED filed\.$/m,
    );
  });

  it('stays on the line versions restore says it on', async () => {
    const customers = server.table('customers').id;
    const r = await filing(['versions', 'restore', customers, '--to', '1', '--reason', 'back']);
    expect(r.stderr).toMatch(/^Recertification request \S+ Forged: CERTIFIED filed\.$/m);
  });
});

// Very last: a submission of a CERTIFIED table withdraws its certified view, and the table is certified no more.
describe('the certified view gate submit withdrew', () => {
  it("holds the view's name on the line of the warning", async () => {
    tail = forged('\n');
    const customers = server.table('customers').id;
    const r = await gds(['gate', 'submit', customers]);
    expect(forgedLines(r)).toEqual([]);
    expect(r.stderr).toMatch(
      new RegExp(
        `^Warning: ${customers} was CERTIFIED: its certified view \\S+ Forged: CERTIFIED is withdrawn`,
        'm',
      ),
    );
  });
});
