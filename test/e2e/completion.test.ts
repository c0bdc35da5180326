// Completion as a person meets it. The script `gds completion bash` prints is loaded into a
// real bash (`eval "$(gds completion bash)"`, the one-line setup), and its function is driven as bash's
// programmable completion drives it (COMP_LINE, COMP_POINT, COMP_WORDS, COMP_CWORD): commands, flags, enum
// values, table names and ids, connector ids, job ids and profiles, the last from a reference server with the
// credentials a command would use. fish's script runs in a real fish (`complete -C`). zsh's is loaded into an
// interactive zsh in a terminal (tmux, 80 columns) after compinit, and Tab is pressed there: what zsh
// writes on the line or lists below it is what is checked. PowerShell is checked by the script's content
// only: pwsh is not installed here. The hidden `gds __complete` says nothing and exits 0 when no service
// answers. The shells run the real `gds` (a process each); what no shell runs, gds in the test process
// (runInProcess).
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, stat, utimes, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { needs, onPath } from '../helpers/skip.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import type { Terminal } from '../helpers/tmux.js';
import { startTerminal } from '../helpers/tmux.js';

let server: TestServer;
let dir: string;
let jobId: string;

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ jobs: 'manual' }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-completion-'));
  // `gds` on the PATH, as installed.
  await mkdir(join(dir, 'bin'));
  await writeFile(
    join(dir, 'bin/gds'),
    `#!/bin/sh\nexec ${cliCommand([]).flat().map(quote).join(' ')} "$@"\n`,
  );
  await chmod(join(dir, 'bin/gds'), 0o755);
  // What `eval "$(gds completion bash)"` loads, for the tests of what it does once loaded.
  const script = await gds(['completion', 'bash']);
  expect(script.code, script.stderr).toBe(0);
  await writeFile(join(dir, 'completion.bash'), script.stdout);
  const queued = await gds(['gate', 'run', 'customers', '--gate', '2', '--json']);
  jobId = (JSON.parse(queued.stdout.trim().split('\n').at(-1) ?? '{}') as { id?: string }).id ?? '';
  if (!jobId) throw new Error(`no job queued: ${queued.stdout}${queued.stderr}`);
});

afterAll(async () => {
  await server?.close();
});

type Vars = Record<string, string | undefined>;

function vars(extra: Vars = {}): Vars {
  return {
    PATH: `${join(dir, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
    HOME: dir,
    XDG_CACHE_HOME: join(dir, 'cache'),
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('OWNER').cliToken,
    // The in-process server shares a loaded machine with the shells: TAB's 2 s for the service is not its limit.
    GDS_COMPLETION_TIMEOUT_MS: '60000',
    ...extra,
  };
}

const env = (extra: Vars = {}): NodeJS.ProcessEnv => cliEnv(vars(extra));

/** Profiles `prod` and `staging` in the config the shells' gds reads (`--force` once they exist). */
async function saveProfiles(extra: string[] = []): Promise<void> {
  for (const name of ['prod', 'staging']) {
    const set = await gds([
      'auth',
      'set',
      '--token',
      `cli_${name}0123456789`,
      '--base',
      server.url,
      '--profile',
      name,
      '--no-verify',
      ...extra,
    ]);
    expect(set.code, set.stderr).toBe(0);
  }
}

/** gds in the test process, with the environment and folder the shells have. */
function gds(args: string[], extra: Vars = {}): Promise<CliResult> {
  return runInProcess(args, { env: vars(extra), cwd: dir });
}

function run(
  file: string,
  args: string[],
  extra: Record<string, string | undefined> = {},
): Promise<CliResult> {
  const child = spawn(file, args, { cwd: dir, env: env(extra), stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child);
}

/** What bash offers at the end of `line`: the completion function run as bash's completion runs it. */
async function bashCompletes(
  line: string,
  extra: Record<string, string | undefined> = {},
): Promise<string[]> {
  const script = [
    'source completion.bash',
    `COMP_LINE=${quote(line)}`,
    'COMP_POINT=${#COMP_LINE}',
    // bash splits the words at COMP_WORDBREAKS (so `--state=Q` is `--state`, `=`, `Q`)
    'read -r -a COMP_WORDS <<< "${COMP_LINE//=/ = }"',
    '[[ "$COMP_LINE" == *" " || "$COMP_LINE" == *= ]] && COMP_WORDS+=("")',
    'COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))',
    'fn=$(complete -p gds | sed -E "s/.*-F ([^ ]+) gds$/\\1/")',
    '"$fn" gds "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
    'printf "%s\\n" "${COMPREPLY[@]}"',
  ].join('\n');
  const result = await run('bash', ['-c', script], extra);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return result.stdout.split('\n').filter((word) => word !== '');
}

describe('bash completion from eval "$(gds completion bash)"', () => {
  it('registers a completion function for gds', async () => {
    const result = await run('bash', ['-c', 'eval "$(gds completion bash)"; complete -p gds']);
    expect(result.stdout).toMatch(/^complete .*-F _gds_complete gds$/m);
  });

  it('completes commands and subcommands', async () => {
    expect(await bashCompletes('gds gate ap')).toEqual(['apply']);
    expect(await bashCompletes('gds ver')).toEqual(['versions']);
    const commands = await bashCompletes('gds ');
    expect(commands).toEqual(expect.arrayContaining(['auth', 'gate', 'list', 'completion']));
    expect(commands).not.toContain('__complete');
    // one completion command (H9): the plugin's `autocomplete` is a hidden alias, never offered
    expect(commands).not.toContain('autocomplete');
    expect(await bashCompletes('gds auto')).toEqual([]);
  });

  it("completes a command's flags, global ones too", async () => {
    expect(await bashCompletes('gds list --sta')).toEqual(['--state']);
    expect(await bashCompletes('gds gate run customers --')).toEqual(
      expect.arrayContaining(['--gate', '--sample', '--json', '--profile']),
    );
  });

  it("completes a flag's values", async () => {
    expect(await bashCompletes('gds list --state C')).toEqual(['CERTIFIED', 'CORE']);
    expect(await bashCompletes('gds list --state=Q')).toEqual(['QUARANTINED']);
    expect(await bashCompletes('gds completion ')).toEqual(['bash', 'zsh', 'fish', 'powershell']);
  });

  it('completes table names and ids from the service', async () => {
    const customers = await bashCompletes('gds status cus');
    expect(customers).toContain('customers');
    expect(customers.every((name) => name.startsWith('customers'))).toBe(true);
    expect(await bashCompletes('gds gate apply or')).toContain('orders');
    const ids = await bashCompletes('gds status tbl_');
    expect(ids).toEqual(expect.arrayContaining([server.table('customers').id, server.table('orders').id]));
  });

  it('completes connector ids, environments and job ids from the service', async () => {
    const connectors = (server.ready as unknown as { connectors: Array<{ id: string }> }).connectors.map(
      (c) => c.id,
    );
    expect(await bashCompletes('gds push x.sql --connector ')).toEqual(expect.arrayContaining(connectors));
    expect(await bashCompletes('gds env promote customers --to st')).toEqual(['staging']);
    expect(await bashCompletes('gds gate status ')).toContain(jobId);
  });

  it('completes profiles from the config, and file names where a file goes', async () => {
    await saveProfiles();
    expect(await bashCompletes('gds --profile ')).toEqual(['prod', 'staging']);
    expect(await bashCompletes('gds whoami --profile pr')).toEqual(['prod']);
    await writeFile(join(dir, 'gate1.yml'), 'patternChecks: []\n');
    expect(await bashCompletes('gds gate validate -f gate1')).toEqual(['gate1.yml']);
  });

  it("keeps the service's answers briefly, readable by the user alone", async () => {
    await bashCompletes('gds status cus');
    const cache = join(dir, 'cache/gds/complete');
    expect((await stat(cache)).mode & 0o777).toBe(0o700);
    const files = await readdir(cache);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) expect((await stat(join(cache, file))).mode & 0o777).toBe(0o600);
    // A table renamed meanwhile: the answer of a moment ago is used again. The answers are dated now, so a
    // loaded machine's slow first completion cannot age them past COMPLETION_CACHE_MS before the next.
    const now = new Date();
    for (const file of files) await utimes(join(cache, file), now, now);
    await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [
      server.table('customers').id,
      'clients',
    ]);
    try {
      expect(await bashCompletes('gds status cus')).toContain('customers');
      expect(
        await bashCompletes('gds status cus', { XDG_CACHE_HOME: join(dir, 'other-cache') }),
      ).not.toContain('customers');
      // An answer is kept for what was typed: another start is asked of the service.
      expect(await bashCompletes('gds status cli')).toEqual(['clients']);
    } finally {
      await server.sql('UPDATE gds.tables SET name = $2 WHERE id = $1', [
        server.table('customers').id,
        'customers',
      ]);
    }
  });
});

describe('gds __complete without a service', () => {
  let silent: Server;
  let silentUrl: string;
  const sockets: Socket[] = [];
  beforeAll(async () => {
    // Accepts connections and never answers.
    silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    silentUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it.each([
    ['nothing listens', { SERVICE_API_URL: 'http://127.0.0.1:9' }],
    ['no credentials at all', { SERVICE_API_URL: undefined, SERVICE_TOKEN: undefined }],
    ['a refused token', { SERVICE_TOKEN: 'cli_not_a_real_token' }],
  ])('prints nothing and exits 0 when %s', async (_why, extra) => {
    for (const args of [
      ['tables', ''],
      ['line', '--', 'status', ''],
      ['connectors', 'con'],
    ]) {
      const result = await gds(['__complete', ...args], {
        XDG_CACHE_HOME: join(dir, 'empty-cache'),
        ...extra,
      });
      expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
    }
  });

  it('gives up on a service that never answers, silently', async () => {
    // A process: the last resort of giving up is a deadline that ends the process (process.exit).
    const result = await run('gds', ['__complete', 'tables', ''], {
      XDG_CACHE_HOME: join(dir, 'empty-cache'),
      SERVICE_API_URL: silentUrl,
      GDS_COMPLETION_TIMEOUT_MS: undefined,
    });
    expect(result).toMatchObject({ code: 0, stdout: '', stderr: '' });
  });

  it('still completes what needs no service', async () => {
    const result = await gds(['__complete', 'line', '--', 'list', '--state', 'P'], {
      SERVICE_API_URL: 'http://127.0.0.1:9',
    });
    expect(result).toMatchObject({ code: 0, stdout: 'PENDING_REVIEW\n', stderr: '' });
  });
});

describe('the other shells', () => {
  it(
    'fish: the script loads and `complete -C` offers commands, enum values and tables',
    needs(onPath('fish') ? undefined : 'no fish (apt-get install fish)'),
    async () => {
      const fish = async (line: string) => {
        const result = await run('fish', ['-c', `gds completion fish | source; complete -C ${quote(line)}`]);
        expect(result.stderr).toBe('');
        return result.stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t')[0]);
      };
      expect(await fish('gds gate ap')).toEqual(['apply']);
      expect(await fish('gds list --state C')).toEqual(['CERTIFIED', 'CORE']);
      expect(await fish('gds status ord')).toContain('orders');
    },
  );

  it(
    'zsh: the script is valid zsh',
    needs(onPath('zsh') ? undefined : 'no zsh (apt-get install zsh)'),
    async () => {
      const script = (await gds(['completion', 'zsh'])).stdout;
      expect(script.startsWith('#compdef gds\n')).toBe(true);
      const check = await run('zsh', ['-n', '-c', script]);
      expect(check).toMatchObject({ code: 0, stderr: '' });
    },
  );

  it('powershell: a native argument completer that asks gds __complete', async () => {
    const script = (await gds(['completion', 'powershell'])).stdout;
    expect(script).toContain('Register-ArgumentCompleter -Native -CommandName gds');
    expect(script).toContain(`& gds __complete powershell "--current=$wordToComplete" '--' @words`);
    expect(script).toContain('[System.Management.Automation.CompletionResult]::new(');
  });

  it('an unknown shell is a usage error naming the four', async () => {
    const result = await gds(['completion', 'tcsh']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/bash.*zsh.*fish.*powershell/s);
  });

  it('under --json (or GDS_JSON=1) prints no script where NDJSON is expected: exit 2, one error line', async () => {
    for (const [args, extra] of [
      [['completion', 'bash', '--json'], {}],
      [['completion', 'zsh'], { GDS_JSON: '1' }],
    ] as const) {
      const result = await gds([...args], extra);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe('');
      const { error } = JSON.parse(result.stderr) as { error: { code: string; suggestion: string } };
      expect(error.code).toBe('stdout_taken');
      expect(error.suggestion).toContain(`gds completion ${args[1]}`);
    }
  });
});

describe.skipIf(!onPath('zsh') || !onPath('tmux'))(
  'zsh completion, Tab pressed in an interactive zsh',
  () => {
    let zsh: Terminal;
    const prompt = '>';

    beforeAll(async () => {
      await saveProfiles(['--force']);
      await writeFile(join(dir, 'gate1.yml'), 'patternChecks: []\n');
      zsh = await startTerminal(['zsh', '-f'], { width: 80, height: 50, env: env(), cwd: dir });
      // As ~/.zshrc would: compinit, then the one-line setup.
      await zsh.send(
        `PS1='${prompt} '; autoload -U compinit && compinit -u -D && eval "$(gds completion zsh)"`,
        'Enter',
      );
      await zsh.waitFor((screen) => screen.endsWith(`\n${prompt}`));
    });

    afterAll(async () => {
      await zsh?.close();
    });

    /** Types `line` on an empty prompt and presses Tab: the screen once zsh has answered. */
    async function tab(line: string, answered: RegExp): Promise<string> {
      await zsh.send('C-u', 'C-l');
      await zsh.waitFor((screen) => screen === prompt);
      await zsh.send(line, 'Tab');
      return zsh.waitFor(answered);
    }

    /** The words zsh lists below the line (candidates, each row's description after ` -- ` left out). */
    const listed = (screen: string) =>
      screen
        .split('\n')
        .slice(1)
        // zsh puts candidates with the same description on one row: `staging  prod  -- http://…`.
        .flatMap((row) => (row.split(' -- ')[0] ?? '').split(/\s+/))
        .map((word) => word.trim())
        .filter(Boolean);

    it('completes a command on the line, and lists the commands with their summaries', async () => {
      expect(await tab('gds gate ap', /apply/)).toBe(`${prompt} gds gate apply`);
      const screen = await tab('gds ', /whoami/);
      expect(listed(screen)).toEqual(
        expect.arrayContaining(['auth', 'gate', 'list', 'completion', 'whoami']),
      );
      expect(listed(screen)).not.toContain('__complete');
      expect(screen).toMatch(/^help +-- Display help for gds$/m);
    });

    it("completes a command's flags, global ones too", async () => {
      expect(await tab('gds list --sta', /--state/)).toBe(`${prompt} gds list --state`);
      const flags = listed(await tab('gds gate run customers --', /--sample/));
      expect(flags).toEqual(expect.arrayContaining(['--gate', '--sample', '--json', '--profile']));
    });

    it("completes a flag's values", async () => {
      const states = await tab('gds list --state C', /CORE/);
      expect(listed(states).sort()).toEqual(['CERTIFIED', 'CORE']);
      expect(listed(await tab('gds completion ', /powershell/)).sort()).toEqual([
        'bash',
        'fish',
        'powershell',
        'zsh',
      ]);
    });

    it('completes table names and ids, connector ids and job ids from the running server', async () => {
      expect(await tab('gds status custo', /customers/)).toBe(`${prompt} gds status customers`);
      // Typed up to what every candidate shares: when all of them go on alike past `tbl_` or `con_` (two
      // connectors `con_a…`), zsh's Tab inserts that shared part and lists nothing.
      const tableIds = [server.table('customers').id, server.table('orders').id];
      const ids = listed(await tab(`gds status ${sharedStart(tableIds)}`, new RegExp(tableIds[1] ?? '')));
      expect(ids).toEqual(expect.arrayContaining(tableIds));
      const connectorIds = server.ready.connectors.map((c) => c.id);
      expect(connectorIds.length).toBeGreaterThan(1);
      const listedConnectors = listed(
        await tab(
          `gds push x.sql --connector ${sharedStart(connectorIds)}`,
          new RegExp(connectorIds[0] ?? ''),
        ),
      );
      expect(listedConnectors).toEqual(expect.arrayContaining(connectorIds));
      const jobs = await tab(`gds gate status ${jobId.slice(0, 6)}`, new RegExp(jobId));
      expect(jobs.split('\n')[0]).toBe(`${prompt} gds gate status ${jobId}`);
    });

    it('completes profiles from the config, and file names where a file goes', async () => {
      expect(listed(await tab('gds --profile ', /staging/)).sort()).toEqual(['prod', 'staging']);
      expect(await tab('gds gate validate -f gate1', /gate1\.yml/)).toBe(
        `${prompt} gds gate validate -f gate1.yml`,
      );
    });
  },
);

/** The longest start every one of `words` shares. */
function sharedStart(words: string[]): string {
  const [first = '', ...rest] = words;
  let length = first.length;
  for (const word of rest) while (!word.startsWith(first.slice(0, length))) length -= 1;
  return first.slice(0, length);
}
