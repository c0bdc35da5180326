// TAB completion of names the service chose: a table named `h$(touch PWNED)`, "h`touch PWNED`", `h;touch
// PWNED`, `h my table`, `h*` or with quotes must land on the command line as one word that is that name, and
// nothing may run. bash inserts what its completion function puts in COMPREPLY into the line as it is, so each
// candidate is read back here as bash reads the line once Enter is pressed (`eval "w=( $candidate )"`), in a
// folder where a command run by it would leave a file. The real bash and the real `gds` (a process each).
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { needs, onPath } from '../helpers/skip.js';
import { copyTable } from '../helpers/table-copies.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';
import type { Terminal } from '../helpers/tmux.js';
import { startTerminal } from '../helpers/tmux.js';

const HOSTILE = [
  'h$(touch PWNED_1)',
  'h`touch PWNED_2`',
  'h;touch PWNED_3',
  'h my table',
  'h*',
  `h'q"uote`,
  'h~x&y|z',
];

/** Names oclif would read as a flag where an argument goes. */
const DASHED = ['--help', '-x'];

let server: TestServer;
let dir: string;
let work: string;

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
  for (const [i, name] of HOSTILE.entries())
    await copyTable(server, server.table('customers').id, 1, `hostile${i}`, {
      name: `'${name.replaceAll("'", "''")}'`,
    });
  for (const [i, name] of DASHED.entries())
    await copyTable(server, server.table('customers').id, 1, `dashed${i}`, { name: `'${name}'` });
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-completion-hostile-'));
  work = join(dir, 'work');
  await mkdir(work);
  await mkdir(join(dir, 'bin'));
  await writeFile(
    join(dir, 'bin/gds'),
    `#!/bin/sh\nexec ${cliCommand([]).flat().map(quote).join(' ')} "$@"\n`,
  );
  await chmod(join(dir, 'bin/gds'), 0o755);
  const script = await runInProcess(['completion', 'bash'], { env: vars(), cwd: dir });
  expect(script.code, script.stderr).toBe(0);
  await writeFile(join(dir, 'completion.bash'), script.stdout);
});

afterAll(async () => {
  await server?.close();
});

function vars(): Record<string, string | undefined> {
  return {
    PATH: `${join(dir, 'bin')}${delimiter}${process.env.PATH ?? ''}`,
    HOME: dir,
    XDG_CACHE_HOME: join(dir, 'cache'),
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    SERVICE_API_URL: server.url,
    SERVICE_TOKEN: server.user('OWNER').cliToken,
    GDS_COMPLETION_TIMEOUT_MS: '60000',
  };
}

function run(file: string, args: string[]): Promise<CliResult> {
  const child = spawn(file, args, { cwd: work, env: cliEnv(vars()), stdio: ['ignore', 'pipe', 'pipe'] });
  return collect(child);
}

/**
 * What bash's completion leaves at the end of `line`, each candidate as the words bash reads from it once
 * it is on the line (NUL-separated, a candidate's words joined by a newline).
 */
async function bashCandidatesAsRead(line: string): Promise<{ read: string[][]; stderr: string }> {
  const script = [
    `source ${quote(join(dir, 'completion.bash'))}`,
    `COMP_LINE=${quote(line)}`,
    'COMP_POINT=${#COMP_LINE}',
    'read -r -a COMP_WORDS <<< "$COMP_LINE"',
    '[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")',
    'COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))',
    '_gds_complete gds "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"',
    'for candidate in "${COMPREPLY[@]}"; do',
    '  eval "w=( $candidate )"',
    '  (IFS=$\'\\n\'; printf "%s\\0" "${w[*]}")',
    'done',
  ].join('\n');
  const result = await run('bash', ['-c', script]);
  expect(result.code).toBe(0);
  const read = result.stdout
    .split('\0')
    .filter((c) => c !== '')
    .map((c) => c.split('\n'));
  return { read, stderr: result.stderr };
}

describe('bash completion of names the service chose', () => {
  it('puts each name on the line as one word that is the name, and runs nothing', async () => {
    const { read, stderr } = await bashCandidatesAsRead('gds status h');
    const names = read.filter((words) => !words[0]?.startsWith('tbl_'));
    expect(names).toEqual(expect.arrayContaining(HOSTILE.map((name) => [name])));
    expect(names).toHaveLength(HOSTILE.length);
    expect(await readdir(work)).toEqual([]);
    expect(stderr).toBe('');
  });

  it('completes on from a name already begun on the line in its quoted form', async () => {
    // bash put `h\` there (what the quoted names have in common); the person types on and presses TAB again
    const { read: spaced } = await bashCandidatesAsRead('gds status h\\ m');
    expect(spaced).toEqual([['h my table']]);
    const { read: dollar } = await bashCandidatesAsRead('gds status h\\$');
    expect(dollar).toEqual([['h$(touch PWNED_1)']]);
    expect(await readdir(work)).toEqual([]);
  });
});

describe('fish completion of names the service chose', () => {
  it(
    'offers each name as it is (fish escapes what it inserts), and runs nothing',
    needs(onPath('fish') ? undefined : 'no fish (apt-get install fish)'),
    async () => {
      const script = await runInProcess(['completion', 'fish'], { env: vars(), cwd: dir });
      await writeFile(join(dir, 'completion.fish'), script.stdout);
      const result = await run('fish', [
        '-c',
        `source ${quote(join(dir, 'completion.fish'))}; complete -C 'gds status h'`,
      ]);
      expect(result.code).toBe(0);
      const offered = result.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split('\t')[0]);
      expect(offered).toEqual(expect.arrayContaining(HOSTILE));
      expect(await readdir(work)).toEqual([]);
    },
  );
});

// zsh hands the completion function the words as they are on the line, quoted (`h\ m`): read as such, no
// name starts with them. A name begun on the line quoted (as zsh put it there, or as it was typed) completes.
describe('zsh completion of names the service chose', () => {
  const prompt = '>';
  let zsh: Terminal;

  beforeAll(async () => {
    if (!onPath('zsh') || !onPath('tmux')) return;
    zsh = await startTerminal(['zsh', '-f'], { width: 100, height: 30, env: cliEnv(vars()), cwd: work });
    await zsh.send(
      `PS1='${prompt} '; autoload -U compinit && compinit -u -D && eval "$(gds completion zsh)"`,
      'Enter',
    );
    await zsh.waitFor((screen) => screen.endsWith(`\n${prompt}`));
  });

  afterAll(async () => {
    await zsh?.close();
  });

  it(
    'completes a name begun quoted, and inserts it quoted',
    needs(onPath('zsh') && onPath('tmux') ? undefined : 'no zsh or tmux'),
    async () => {
      await zsh.send('C-u', 'C-l');
      await zsh.waitFor((screen) => screen === prompt);
      await zsh.send('gds status h\\ m', 'Tab');
      const screen = await zsh.waitFor(/my\\ table/, 5_000).catch(() => zsh.screen());
      expect(screen.split('\n')[0]).toBe(`${prompt} gds status h\\ my\\ table`);
      expect(await readdir(work)).toEqual([]);
    },
  );
});

// `gds status --help` is help and `gds status -x` an unknown flag: oclif reads a word starting with '-' as a
// flag, and a name completed into that place would not name the table. After `--` it is an argument.
describe('completion of names starting with -', () => {
  const offered = async (...words: string[]) => {
    const result = await runInProcess(['__complete', 'line', '--', ...words], { env: vars(), cwd: dir });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    return result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t')[0] ?? '');
  };

  it('offers them by id only where a flag would be read, and by name after --', async () => {
    const ids = DASHED.map((_, i) => `tbl_dashed${i}_1`);
    const argument = await offered('status', '');
    expect(argument).toEqual(expect.arrayContaining(ids));
    expect(argument.filter((value) => value.startsWith('-'))).toEqual([]);
    const flagValue = await offered('recertification', 'list', '--table', '');
    expect(flagValue).toEqual(expect.arrayContaining(ids));
    expect(flagValue.filter((value) => value.startsWith('-'))).toEqual([]);
    expect(await offered('status', '--', '-')).toEqual(expect.arrayContaining(DASHED));
    expect(await offered('status', '--', '')).toEqual(expect.arrayContaining([...DASHED, ...ids]));
  });

  it('the name completed after -- is the table gds shows', async () => {
    const result = await runInProcess(['status', '--json', '--', '--help'], { env: vars(), cwd: dir });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('tbl_dashed0_1');
  });
});

// pwsh is not installed here: what the PowerShell script is given to insert (the first field of each line) is
// checked, not what PowerShell does with it (test/cli/completion-powershell.test.ts reads the words back).
describe('PowerShell completion of names the service chose', () => {
  it('gives each name quoted as one PowerShell word, the name itself to list', async () => {
    const result = await runInProcess(['__complete', 'powershell', '--current=h', 'status'], {
      env: vars(),
      cwd: dir,
    });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const lines = result.stdout
      .split('\n')
      .filter(Boolean)
      .map((line) => line.split('\t'));
    const byName = new Map(lines.map(([word, name]) => [name, word]));
    for (const name of HOSTILE) expect(byName.get(name), name).toBe(`'${name.replaceAll("'", "''")}'`);
  });
});
