// The oclif base: version, help, topics, usage errors, unknown commands, --json errors and completion in
// process (runInProcess); lazy loading of heavy modules, colour, a terminal and Ctrl-C as a real process
// (node bin/run.js over dist/).
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { arch, platform, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cliEntry,
  cliEnv,
  ensureBuilt,
  node24,
  repoRoot,
  runCli,
  runInTerminal,
} from './helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';

// The service a network command reaches: a 404 for every request, at once. (An unreachable port would cost
// each command the backoff of its retries, seconds of waiting.)
const service = createServer((request, response) => {
  request.resume();
  response.writeHead(404, { 'content-type': 'application/json' });
  response.end('{"error":{"code":"not_found","message":"Nothing here."}}');
});
await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
const base = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
afterAll(() => new Promise((resolve) => service.close(resolve)));

let dir: string;
beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-base-'));
  await writeFile(join(dir, 'a.yml'), 'a: 1\n');
  await writeFile(join(dir, 'b.yml'), 'a: 2\n');
});

function errorLines(stderr: string): unknown[] {
  const lines = stderr.split('\n').filter((l) => l !== '');
  return lines.map((l) => JSON.parse(l) as unknown);
}

describe('version and help', () => {
  it('--version prints name/version platform-arch node-version, the same line oclif prints', async () => {
    const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    const fast = await runInProcess(['--version']);
    // Any argument after --version takes oclif's own path: both must agree.
    const oclif = await runInProcess(['--version', '--json']);
    expect(fast).toMatchObject({ code: 0, stderr: '' });
    expect(fast.stdout).toBe(`gds/${pkg.version} ${platform()}-${arch()} node-${process.version}\n`);
    expect(oclif.stdout).toBe(fast.stdout);
  });

  it('--help (and no arguments) lists topics and commands on stdout', async () => {
    for (const args of [['--help'], []]) {
      const r = await runInProcess(args);
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toContain('gds <command> <subcommand> [flags]');
      expect(r.stdout).toMatch(/CORE COMMANDS\n(?: {2}.*\n)*\s+gate\s+Gate 1 rules/);
      // one command per job, as gh (docs/gh-comparison.md, H9): gds's own completion, not the oclif
      // plugin's autocomplete
      expect(r.stdout).toMatch(/^ {2}completion\s+Print the shell completion script/m);
      expect(r.stdout).not.toMatch(/autocomplete/);
    }
  });

  it("topic help lists the topic's commands with a space separator", async () => {
    const r = await runInProcess(['gate', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('$ gds gate COMMAND');
    expect(r.stdout).toMatch(/gate diff\s+Compare a gate1\.yml with the server's/);
    for (const command of [
      'apply',
      'cancel',
      'get',
      'result',
      'run',
      'status',
      'submit',
      'suggest',
      'validate',
    ]) {
      expect(r.stdout).toMatch(new RegExp(`gate ${command}\\s+\\S`));
    }
  });

  it('command help names the global flags every command accepts once, and where they are explained', async () => {
    const r = await runInProcess(['gate', 'diff', '--help']);
    expect(r.code).toBe(0);
    const global = /\nGLOBAL FLAGS\n((?: {2}.*\n)+)/.exec(r.stdout)?.[1] ?? '';
    expect(global).toMatch(
      /^ {2}--base, -q\/--jq, --json, (?:--max-retry-after, )?--profile, -t\/--template, --token\n {2}\(see `gds help global-flags`\)\n$/,
    );
    // Their descriptions are on the global-flags page only, not in each command's FLAGS.
    expect(r.stdout).not.toContain('--token=<value>');
    const page = await runInProcess(['help', 'global-flags']);
    for (const flag of ['--base', '--json', '--profile', '--token', '--jq', '--template'])
      expect(page.stdout).toContain(flag);
  });
});

describe('usage errors (exit 2)', () => {
  it('a bad flag: human message and suggestion on stderr, nothing on stdout', async () => {
    const r = await runInProcess(['gate', 'diff', '--nope']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('Error: Unknown flag: --nope.\nSee `gds gate diff --help`.\n');
  });

  it('a bad flag under --json, or GDS_CONTENT_TYPE=json: exactly one JSON error line on stderr', async () => {
    const withFlag = await runInProcess(['gate', 'diff', '--nope', '--json']);
    const withEnv = await runInProcess(['gate', 'diff', '--nope'], { env: { GDS_CONTENT_TYPE: 'json' } });
    for (const r of [withFlag, withEnv]) {
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(errorLines(r.stderr)).toEqual([
        {
          error: {
            code: 'usage',
            message: 'Unknown flag: --nope.',
            suggestion: 'See `gds gate diff --help`.',
            details: null,
          },
        },
      ]);
    }
  });

  it('an unknown command', async () => {
    const human = await runInProcess(['gate', 'dif']);
    expect(human.code).toBe(2);
    expect(human.stdout).toBe('');
    // Off a terminal "did you mean" is a suggestion line of its own, not a prompt.
    expect(human.stderr).toBe(
      'Error: Unknown command: gate dif.\nDid you mean `gds gate diff`? Run `gds --help` for the list of commands.\n',
    );
    const underTopic = await runInProcess(['gate', 'frob', 'tbl_1']);
    expect(underTopic.code).toBe(2);
    expect(underTopic.stderr).toBe(
      'Error: Unknown command: gate frob.\n`gds gate` has no command frob: see `gds gate --help` for its commands.\n',
    );
    const json = await runInProcess(['nope', '--json']);
    expect(json.code).toBe(2);
    expect(json.stdout).toBe('');
    expect(errorLines(json.stderr)).toEqual([
      {
        error: {
          code: 'command_not_found',
          message: 'Unknown command: nope.',
          suggestion: 'Run `gds --help` for the list of commands.',
          details: null,
        },
      },
    ]);
  });

  it('a flag before the command: the line with the command first, no value echoed', async () => {
    const r = await runInProcess(['--detailed-exitcode', 'plan', '--dbt', '.']);
    // Under plan's --detailed-exitcode a usage error is 1, never 2 ("a table would change").
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(
      'gds reads the command first, then its flags: `gds plan --detailed-exitcode …`',
    );
    const topic = await runInProcess(['--file=secret-gate1.yml', 'gate', 'diff', 't_1']);
    expect(topic.code).toBe(2);
    expect(topic.stderr).toContain('`gds gate diff --file …`');
    expect(topic.stderr).not.toContain('secret-gate1.yml');
  });

  it('never echoes a --token value whole in an error', async () => {
    const token = 'cli_0123456789secret';
    const r = await runInProcess(['gate', 'diff', 't_1', token, '--token', token]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('Unexpected argument: cli_…****');
    expect(r.stderr).not.toContain('0123456789secret');
  });
});

describe('start-up loads no heavy module', () => {
  const heavy = /\/node_modules\/(ajv|yaml|libpg-query|openid-client|ora|cli-truncate|jq-wasm|diff)\//;
  const preload = join(repoRoot, 'test/cli/fixtures/record-loaded-modules.mjs');

  async function loadedModules(args: string[], env: Record<string, string> = {}): Promise<string[]> {
    const record = join(dir, `modules-${args.join('_').replace(/[^\w]/g, '')}.json`);
    const r = await runCli(args, {
      nodeArgs: ['--import', preload],
      env: { GDS_TEST_LOADED_MODULES: record, SERVICE_API_URL: base, ...env },
    });
    expect(r.code).not.toBeNull();
    return JSON.parse(await readFile(record, 'utf8')) as string[];
  }

  it.each([[['--version']], [['--help']], [['gate', '--help']], [['gate', 'diff', '--help']]])(
    'gds %j',
    async (args) => {
      const modules = await loadedModules(args);
      expect(modules.filter((m) => heavy.test(m))).toEqual([]);
    },
  );

  // gate, push and plan import the modules built on yaml, ajv and the diff library statically: each of these
  // libraries loads when the work needs it, not with the module.
  it.each([
    [['gate', 'status', 'job_1', '--gate', '1', '--token', 'cli_x']],
    [['push', '--help']],
    [['plan', '--help']],
    [['gate', 'validate', '--help']],
  ])('gds %j, whose modules are built on them', async (args) => {
    const modules = await loadedModules(args);
    expect(modules.filter((m) => heavy.test(m))).toEqual([]);
  });

  it('while the command that needs them does load them (the check can fail)', async () => {
    const modules = await loadedModules([
      'gate',
      'diff',
      '-f',
      join(dir, 'a.yml'),
      '--against',
      join(dir, 'b.yml'),
      '--semantic',
    ]);
    const names = new Set(modules.map((m) => heavy.exec(m)?.[1]).filter(Boolean));
    expect([...names].sort()).toEqual(['diff', 'yaml']);
  });

  it('gate validate loads the SQL parser only for a predicate that is more than plain comparisons', async () => {
    const sqlParser = /\/node_modules\/libpg-query\//;
    const plain = join(dir, 'plain-gate1.yml');
    const comparisons = join(dir, 'comparisons-gate1.yml');
    const withSql = join(dir, 'sql-gate1.yml');
    await writeFile(
      plain,
      'patternChecks:\n  - {name: a, column: code, regex: "^[A-Z]+$", severity: WARN}\n',
    );
    await writeFile(comparisons, 'customPredicates:\n  - {name: p, sql: "amount > 0", severity: WARN}\n');
    await writeFile(
      withSql,
      'customPredicates:\n  - {name: p, sql: "lower(code) > \'a\'", severity: WARN}\n',
    );
    const without = await loadedModules(['gate', 'validate', '-f', plain]);
    expect(without.some((m) => m.includes('/node_modules/yaml/'))).toBe(true);
    expect(without.filter((m) => sqlParser.test(m))).toEqual([]);
    // Comparisons of columns and constants are decided without it (core/gate1/plain-predicate.ts).
    const plainPredicates = await loadedModules(['gate', 'validate', '-f', comparisons]);
    expect(plainPredicates.filter((m) => sqlParser.test(m))).toEqual([]);
    const withPredicates = await loadedModules(['gate', 'validate', '-f', withSql]);
    expect(withPredicates.some((m) => sqlParser.test(m))).toBe(true);
  });

  it('a network command loads no undici (its request goes out on node:http)', async () => {
    const modules = await loadedModules(['list', '--json', '--token', 'cli_x', '--base', base]);
    expect(modules.filter((m) => m.includes('/undici/'))).toEqual([]);
  });

  it('push loads PostgreSQL’s parser for a .sql view, and only then', async () => {
    await writeFile(join(dir, 'v.sql'), 'CREATE VIEW analytics.v AS SELECT id FROM t');
    const modules = await loadedModules(['push', join(dir, 'v.sql'), '--token', 'cli_x', '--base', base]);
    expect(modules.some((m) => m.includes('/node_modules/libpg-query/'))).toBe(true);
  });
});

describe('without a terminal', () => {
  it('prints no colour, even in CI where oclif would colour its own messages', async () => {
    for (const args of [['gate', 'dif'], ['--help'], ['gate', 'diff', '--nope']]) {
      const r = await runCli(args, { env: { CI: 'true', GITHUB_ACTIONS: 'true' } });
      expect(r.stdout + r.stderr).not.toContain('\u001b[');
    }
  });
});

describe('on a terminal', () => {
  it('colours the diff on a TTY', async () => {
    const { result } = runInTerminal(
      `${node24} ${cliEntry} gate diff -f ${join(dir, 'b.yml')} --against ${join(dir, 'a.yml')}`,
    );
    const r = await result;
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('\u001b[31m-a: 1\u001b[39m');
    expect(r.stdout).toContain('\u001b[32m+a: 2\u001b[39m');
  });

  it('prints no colour with NO_COLOR, even on a TTY', async () => {
    const { result } = runInTerminal(
      `${node24} ${cliEntry} gate diff -f ${join(dir, 'b.yml')} --against ${join(dir, 'a.yml')}`,
      { NO_COLOR: '1' },
    );
    const r = await result;
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('-a: 1');
    expect(r.stdout).not.toContain('\u001b[');
  });

  it('refuses -f - when stdin is the terminal instead of waiting', async () => {
    const { result } = runInTerminal(`${node24} ${cliEntry} gate diff -f - --against ${join(dir, 'a.yml')}`);
    const r = await result;
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('stdin is a terminal with nothing piped in');
  });

  it('Ctrl-C exits 130 and shows the cursor again', async () => {
    // The writer keeps gds waiting on stdin and ignores ^C: were it to end at ^C too (as `cat` does), the
    // end of gds's input could reach gds before its SIGINT does, on a loaded machine, and gds would rightly
    // answer the empty input (exit 2). It ends at the first blank line it writes once gds is gone.
    const { child, result } = runInTerminal(
      `sh -c 'trap "" INT; while echo; do sleep 0.1; done' | ${node24} ${cliEntry} gate diff -f - --against ${join(dir, 'a.yml')}`,
      { DEBUG: 'oclif:gds:gate:diff' },
    );
    let seen = '';
    await new Promise<void>((resolve) => {
      child.stdout?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('interrupt handler installed')) resolve();
      });
      child.on('close', () => resolve());
    });
    child.stdin?.write('\u0003');
    const r = await result;
    expect(r.code).toBe(130);
    expect(seen + r.stdout).toContain('\u001b[?25h');
  });
});

describe('interrupted under --json', () => {
  it('SIGINT: exit 130 with one JSON error line on stderr', async () => {
    const child = spawn(
      node24,
      [cliEntry, 'gate', 'diff', '-f', '-', '--against', join(dir, 'a.yml'), '--json'],
      {
        env: cliEnv({ DEBUG: 'oclif:gds:gate:diff' }),
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise<void>((resolve) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('interrupt handler installed')) resolve();
      });
      child.on('close', () => resolve());
    });
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stdout).toBe('');
    const jsonLines = stderr.split('\n').filter((l) => l.startsWith('{'));
    expect(jsonLines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { error: { code: 'interrupted', message: 'Interrupted.', suggestion: null, details: null } },
    ]);
  });
});

describe('shell completion', () => {
  it("`gds autocomplete` (the old plugin's name) is a hidden alias of `gds completion`", async () => {
    const [completion, alias] = await Promise.all([
      runInProcess(['completion', 'bash']),
      runInProcess(['autocomplete', 'bash']),
    ]);
    expect(completion).toMatchObject({ code: 0, stderr: '' });
    expect(completion.stdout).toContain('complete -o nosort -F _gds_complete gds');
    expect(alias).toEqual(completion);
    const bare = await runInProcess(['autocomplete']);
    expect(bare.code).toBe(2);
    expect(bare.stderr).toContain('Missing required argument <shell>: (bash|zsh|fish|powershell)');
    expect(bare.stderr).toContain('gds completion --help');
  });
});
