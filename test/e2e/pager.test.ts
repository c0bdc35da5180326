// Long output through a pager, as gh 2.23 does. On a terminal (a
// pseudo-terminal from `script`, or tmux for a real `less` driven by keys) the lists and `gds api` go through
// GDS_PAGER, else PAGER; piped output never does, help never does. The pagers here are shell commands
// that keep what they were given (`sh -c 'cat > file'`), so what was paged is read back from disk; `less`
// itself is checked in tmux: q before the end is exit 0, Ctrl-C waits for the pager and exits 130. What is
// piped runs gds in the test process (runInProcess), what is on a terminal a real gds.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { needs, onPath } from '../helpers/skip.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import { startTerminal } from '../helpers/tmux.js';

let server: TestServer;
let dir: string;
/** Pages asked of /pages, a list of 100 pages of 50 items each (nextCursor), counted. */
let pagesAsked = 0;
/** How long /pages takes to answer a page: none for a run that reads them all, 20 ms for one that is stopped. */
let pageDelayMs = 20;
/**
 * A service answering any path with 400 items (`gds api` prints them indented, over 1,600 lines), and
 * /pages with a page of a 100-page list.
 */
const big = createServer((request, response) => {
  response.setHeader('content-type', 'application/json');
  const url = new URL(request.url ?? '/', 'http://x');
  if (url.pathname === '/pages') {
    pagesAsked += 1;
    const page = Number(url.searchParams.get('cursor') ?? '0');
    const items = Array.from({ length: 50 }, (_, n) => ({ n: page * 50 + n }));
    // 20 ms a page: the 100 pages take 2 s, far longer than a pager's exit takes to reach gds
    setTimeout(() => {
      response.end(JSON.stringify({ items, ...(page < 99 ? { nextCursor: String(page + 1) } : {}) }));
    }, pageDelayMs);
    return;
  }
  response.end(JSON.stringify(Array.from({ length: 400 }, (_, n) => ({ n, title: `item ${n}` }))));
});
let bigBase = '';

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-pager-'));
  await new Promise<void>((resolve) => big.listen(0, '127.0.0.1', resolve));
  bigBase = `http://127.0.0.1:${(big.address() as AddressInfo).port}`;
});

afterAll(async () => {
  big.close();
  await server?.close();
});

const env = () => ({
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user('OWNER').cliToken,
  GDS_CONFIG_DIR: '/nonexistent/gds',
});
const strip = (text: string) => text.replaceAll(/\u001b\[[0-9;?]*[A-Za-z]/g, '').replaceAll('\r\n', '\n');
const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
let files = 0;

/** A pager that keeps its input in a file, and its LESS and LV in another, for the test to read back. */
function recordingPager(): { command: string; paged: string; seen: string } {
  files += 1;
  const paged = join(dir, `paged-${files}`);
  const seen = join(dir, `env-${files}`);
  const script = `printf '%s|%s|%s' "\${LESS-unset}" "\${LV-unset}" "\${PAGER-unset}" > ${quote(seen)}; cat > ${quote(paged)}`;
  return { command: `sh -c ${quote(script)}`, paged, seen };
}

/** `gds args` in a pseudo-terminal, 100 columns by 40 rows: its exit code and what the terminal showed. */
async function onTerminal(args: string[], extra: Record<string, string | undefined>) {
  const [command, argv] = cliCommand(args);
  const line = `stty cols 100 rows 40; ${[command, ...argv].map(quote).join(' ')}`;
  const r: CliResult = await runInTerminal(line, { ...env(), ...extra }).result;
  return { code: r.code, text: strip(r.stdout) };
}

describe('gds pages long output on a terminal, as gh does (O15)', () => {
  it('a list goes through GDS_PAGER on a terminal: the pager has the table, the terminal nothing of it', async () => {
    const pager = recordingPager();
    const r = await onTerminal(['list'], { GDS_PAGER: pager.command });
    expect(r.code).toBe(0);
    const paged = strip(await readFile(pager.paged, 'utf8'));
    expect(paged).toMatch(/^ID +NAME +MODE +STATE/);
    expect(paged).toContain('customers');
    expect(r.text).not.toContain('customers');
    // gh's environment for the pager: LESS=FRX and LV=-c when unset, and no PAGER
    expect(await readFile(pager.seen, 'utf8')).toBe('FRX|-c|unset');
  });

  it("a list's footnote (Showing the newest N) comes once the pager is quit, not over its prompt line", async () => {
    const pager = recordingPager();
    const r = await onTerminal(['audit', 'list', '-L', '2'], {
      GDS_PAGER: `${pager.command}; echo PAGER-QUIT`,
    });
    expect(r.code).toBe(0);
    expect(strip(await readFile(pager.paged, 'utf8'))).toMatch(/^TIME +ACTION/);
    const quit = r.text.indexOf('PAGER-QUIT');
    expect(quit, r.text).toBeGreaterThanOrEqual(0);
    expect(r.text.indexOf('Showing the newest 2')).toBeGreaterThan(quit);
  });

  it('gds api on a terminal: the whole indented answer is paged; a LESS of your own is kept', async () => {
    const pager = recordingPager();
    const r = await onTerminal(['api', '/items', '--base', bigBase, '--token', 'cli_pager_test_aaaa'], {
      PAGER: pager.command,
      LESS: '-R',
    });
    expect(r.code).toBe(0);
    const paged = strip(await readFile(pager.paged, 'utf8'));
    expect(JSON.parse(paged)).toHaveLength(400);
    expect(paged.split('\n').length).toBeGreaterThan(1600);
    expect(await readFile(pager.seen, 'utf8')).toBe('-R|-c|unset');
  });

  it('GDS_PAGER comes before PAGER; GDS_PAGER empty or cat is no pager', async () => {
    const first = recordingPager();
    const second = recordingPager();
    const r = await onTerminal(['list'], { GDS_PAGER: first.command, PAGER: second.command });
    expect(r.code).toBe(0);
    expect(existsSync(first.paged)).toBe(true);
    expect(existsSync(second.paged)).toBe(false);
    for (const none of ['', 'cat']) {
      const unused = recordingPager();
      const plain = await onTerminal(['list'], { GDS_PAGER: none, PAGER: unused.command });
      expect(plain.code).toBe(0);
      expect(plain.text).toContain('customers');
      expect(existsSync(unused.paged)).toBe(false);
    }
  });

  it('the pager of gds settings comes after GDS_PAGER and before PAGER', async () => {
    const config = await mkdtemp(join(dir, 'config-'));
    const setting = recordingPager();
    const set = await runInProcess(['settings', 'set', 'pager', setting.command], {
      env: { GDS_CONFIG_DIR: config },
    });
    expect(set.code, set.stderr).toBe(0);
    const fromPager = recordingPager();
    const r = await onTerminal(['list'], { GDS_CONFIG_DIR: config, PAGER: fromPager.command });
    expect(r.code).toBe(0);
    expect(strip(await readFile(setting.paged, 'utf8'))).toContain('customers');
    expect(existsSync(fromPager.paged)).toBe(false);
    const first = recordingPager();
    await onTerminal(['list'], { GDS_CONFIG_DIR: config, GDS_PAGER: first.command });
    expect(existsSync(first.paged)).toBe(true);
    const none = await onTerminal(['list'], { GDS_CONFIG_DIR: config, GDS_PAGER: '' });
    expect(none.text).toContain('customers');
  });

  it('piped output never goes through the pager, --json or not', async () => {
    for (const args of [['list'], ['list', '--json'], ['api', '/api/me']]) {
      const pager = recordingPager();
      const r = await runInProcess(args, {
        env: { ...env(), GDS_PAGER: pager.command, PAGER: pager.command },
      });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).not.toBe('');
      expect(existsSync(pager.paged)).toBe(false);
    }
  });

  it('help is never paged, nor a command that does not list (status)', async () => {
    for (const args of [['--help'], ['list', '--help'], ['help', 'environment'], ['status', 'customers']]) {
      const pager = recordingPager();
      const r = await onTerminal(args, { PAGER: pager.command });
      expect(r.code).toBe(0);
      expect(r.text.length).toBeGreaterThan(100);
      expect(existsSync(pager.paged)).toBe(false);
    }
  });

  it('a pager that stops reading early (head -3) is no error: exit 0, nothing on stderr', async () => {
    const r = await onTerminal(['api', '/items', '--base', bigBase, '--token', 'cli_pager_test_aaaa'], {
      GDS_PAGER: 'head -3',
    });
    expect(r.code).toBe(0);
    expect(r.text.trimEnd().split('\n')).toEqual(['[', '  {', '    "n": 0,']);
  });

  it('quitting the pager early stops the command, as gh: --paginate asks no more pages, exit 0', async () => {
    const args = ['api', '/pages', '--paginate', '--base', bigBase, '--token', 'cli_pager_test_aaaa'];
    pagesAsked = 0;
    pageDelayMs = 0;
    const all = await runInProcess(args, { env: { GDS_CONFIG_DIR: '/nonexistent/gds' } }).finally(() => {
      pageDelayMs = 20;
    });
    expect(all.code, all.stderr).toBe(0);
    expect(all.stdout.trimEnd().split('\n')).toHaveLength(5000);
    expect(pagesAsked).toBe(100);
    pagesAsked = 0;
    const r = await onTerminal(args, { GDS_PAGER: 'head -2' });
    expect(r.code).toBe(0);
    // on a terminal each item is indented, as all JSON gds prints there; the pager shows the first two lines
    expect(r.text.trimEnd().split('\n')).toEqual(['{', '  "n": 0']);
    // without stopping, all 100 (as piped above)
    expect(pagesAsked).toBeLessThan(50);
  });

  it('gate diff quit in the pager before the end still answers: exit 1 when the files differ, 0 when not', async () => {
    // 2,000 checks each changed: a diff of 8,000 lines, far past what a pipe holds once the pager has gone
    const checks = (severity: string) =>
      'patternChecks:\n' +
      Array.from(
        { length: 2000 },
        (_, n) => `  - name: c${n}\n    column: email\n    regex: "^.+@.+$"\n    severity: ${severity}\n`,
      ).join('');
    const before = join(dir, 'diff-before.yml');
    const after = join(dir, 'diff-after.yml');
    await Promise.all([writeFile(before, checks('error')), writeFile(after, checks('warn'))]);
    const different = await onTerminal(['gate', 'diff', '-f', after, '--against', before], {
      GDS_PAGER: 'head -2',
    });
    // the pager showed the diff's first two lines (its headers) and quit; gds's summary on stderr comes before
    // or after them, as the terminal takes the two streams
    expect(different.text).toMatch(/^--- .*diff-before\.yml$/m);
    expect(different.text).toMatch(/^\+\+\+ .*diff-after\.yml$/m);
    expect(different.text).not.toContain('@@');
    expect(different.code).toBe(1);
    const same = await onTerminal(['gate', 'diff', '-f', before, '--against', before], {
      GDS_PAGER: 'head -2',
    });
    expect(same.code).toBe(0);
  });

  it('a pager that is not there is said, and the output printed without one', async () => {
    const r = await onTerminal(['list'], { PAGER: 'no-such-pager-gds -R' });
    expect(r.code).toBe(0);
    expect(r.text).toContain('The pager "no-such-pager-gds -R" (from PAGER) was not found');
    expect(r.text).toContain('customers');
  });
});

describe(
  'with less in a real terminal (tmux)',
  needs(onPath('tmux') && onPath('less') ? undefined : 'no tmux or less'),
  () => {
    async function inLess() {
      const [command, args] = cliCommand([
        'api',
        '/items',
        '--base',
        bigBase,
        '--token',
        'cli_pager_test_aaaa',
      ]);
      // A shell runs gds and prints its exit status on the screen (see profile-picker.test.ts): bash, which
      // goes on after a child that handled Ctrl-C itself, as an interactive shell does.
      const term = await startTerminal(['bash', '-c', '"$0" "$@"; echo "[exit $?]"', command, ...args], {
        width: 80,
        height: 24,
        env: cliEnv({ GDS_PAGER: 'less', LESS: undefined, GDS_CONFIG_DIR: '/nonexistent/gds' }),
      });
      // less shows the first screen and waits (the answer is far longer than 24 rows)
      const first = await term.waitFor(/"title": "item 4"/);
      expect(first).not.toContain('[exit');
      return term;
    }

    it('q before the end quits the pager and gds, exit 0', async () => {
      const term = await inLess();
      try {
        await term.send('q');
        const screen = await term.waitFor(/\[exit \d+\]/);
        expect(screen).toContain('[exit 0]');
        expect(screen).not.toMatch(/Error|EPIPE/);
      } finally {
        await term.close();
      }
    });

    it('Ctrl-C leaves less open; gds exits 130 once less is quit', async () => {
      const term = await inLess();
      try {
        await term.send('C-c');
        // less still answers keys: G, to the end of the answer. A key typed while less is still taking the
        // Ctrl-C may be dropped (seen on a loaded machine): G is pressed again until the end shows.
        await term.waitFor(async (screen) => {
          if (/"title": "item 399"/.test(screen)) return true;
          await term.send('G');
          return false;
        });
        expect(await term.screen()).not.toContain('[exit');
        await term.send('q');
        expect(await term.waitFor(/\[exit \d+\]/)).toContain('[exit 130]');
      } finally {
        await term.close();
      }
    });
  },
);
