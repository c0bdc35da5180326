// Smoke test of the single executable: the executable `npm run test:e2e:binary` builds (GDS_TEST_CLI names
// it; `npm test` leaves this folder out, vitest.config.ts) is copied to a temp folder and run there with an
// empty environment: no node_modules, no Node on the PATH, HOME in the temp folder. Where the answer is the
// same by design, the binary's output is compared with `node bin/run.js`'s (ensureBuilt: dist/ from tsc).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chmod, copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/commands/index.js';
import { collect, ensureBuilt, repoRoot, runThroughNode } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { needs, noSecretServiceTools } from '../helpers/skip.js';

const builtExecutable = process.env.GDS_TEST_CLI;
const noBuildTools =
  builtExecutable === undefined || !existsSync(builtExecutable)
    ? 'no single executable to test: npm run test:e2e:binary builds it and names it in GDS_TEST_CLI'
    : undefined;
const golden = join(repoRoot, 'test/core/gate1/golden');

let dir: string;
let gds: string;
let home: string;
/** A PATH with nothing on it: the binary must need no `node` (nor anything else) from the PATH. */
let emptyPath: string;

beforeAll(async () => {
  if (builtExecutable === undefined) return;
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-binary-'));
  gds = join(dir, 'gds');
  home = join(dir, 'home');
  emptyPath = join(dir, 'empty-path');
  await Promise.all([mkdir(home), mkdir(emptyPath)]);
  await copyFile(builtExecutable, gds);
  await writeFile(
    join(dir, 'a.yml'),
    'patternChecks:\n  - {name: a, column: c, regex: "^x$", severity: WARN}\n',
  );
  await writeFile(
    join(dir, 'b.yml'),
    'patternChecks:\n  - {name: a, column: c, regex: "^y$", severity: WARN}\n',
  );
});

afterAll(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

function runBinary(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  const child = spawn(gds, args, {
    cwd: dir,
    env: { PATH: emptyPath, HOME: home, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

/** The same arguments through `node bin/run.js` (not GDS_TEST_CLI, which names the executable), run from the same folder. */
function runNode(args: string[]): Promise<CliResult> {
  return runThroughNode(args, { cwd: dir, env: { HOME: home } });
}

function jsonLines(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as unknown);
}

describe('dist/gds, copied alone to a temp folder, empty environment', needs(noBuildTools), () => {
  it('--version prints the same line as node bin/run.js', async () => {
    const [binary, viaNode] = await Promise.all([runBinary(['--version']), runNode(['--version'])]);
    expect(binary).toMatchObject({ code: 0, stderr: '' });
    expect(binary.stdout).toMatch(/^gds\/\d+\.\d+\.\d+ linux-x64 node-v24\.\d+\.\d+\n$/);
    expect(binary.stdout).toBe(viaNode.stdout);
  });

  it('ignores NODE_OPTIONS meant for a Node installation', async () => {
    const r = await runBinary(['--help'], { NODE_OPTIONS: `--require ${join(dir, 'missing.cjs')}` });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(r.stdout).toContain('gds <command> <subcommand> [flags]');
  });

  it('--help lists the topics and commands, as node bin/run.js does', async () => {
    const [binary, viaNode] = await Promise.all([runBinary(['--help']), runNode(['--help'])]);
    expect(binary).toMatchObject({ code: 0, stderr: '' });
    expect(binary.stdout).toMatch(/CORE COMMANDS\n(?: {2}.*\n)*\s+gate\s+Gate 1 rules/);
    // one completion command, gds's own, as gh has (docs/gh-comparison.md, H9): the oclif plugin's
    // `autocomplete` is gone
    expect(binary.stdout).toMatch(/^ {2}completion\s+Print the shell completion script/m);
    expect(binary.stdout).not.toMatch(/autocomplete/);
    expect(binary.stdout).toBe(viaNode.stdout);
  });

  it('topic help lists every command of the topic', async () => {
    const r = await runBinary(['gate', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('$ gds gate COMMAND');
    const gateCommands = Object.keys(COMMANDS).filter((id) => id.startsWith('gate:'));
    expect(gateCommands.length).toBeGreaterThan(0);
    for (const id of gateCommands) expect(r.stdout).toMatch(new RegExp(`${id.replace(':', ' ')}\\s+\\S`));
  });

  it('every command of the command map answers --help in the binary', async () => {
    for (const [id, command] of Object.entries(COMMANDS)) {
      if (command.hidden === true) continue; // gds __complete: what the completion scripts ask, no help page
      const r = await runBinary([...id.split(':'), '--help']);
      expect(r.code, id).toBe(0);
      expect(r.stdout, id).toContain(`$ gds ${id.split(':').join(' ')}`);
      expect(r.stdout, id).toContain('GLOBAL FLAGS');
    }
  });

  it('--json: gate diff of two files prints NDJSON only, every line parsing, and exits 1 (different)', async () => {
    const r = await runBinary(['gate', 'diff', '-f', 'b.yml', '--against', 'a.yml', '--semantic', '--json']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('');
    const lines = jsonLines(r.stdout);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ identical: false, semantic: true });
  });

  it('gate validate prints the golden diagnostics of every golden gate1.yml (ajv standalone, built in)', async () => {
    const inputs = (await readdir(golden)).filter((f) => f.endsWith('.input'));
    expect(inputs.length).toBeGreaterThan(5);
    for (const input of inputs) {
      const name = input.replace(/\.input$/, '');
      await copyFile(join(golden, input), join(dir, `${name}.yml`));
      const expected = (await readFile(join(golden, `${name}.expected`), 'utf8')).split('\n');
      const valid = expected.at(-2) === 'valid: true';
      const r = await runBinary(['gate', 'validate', '-f', `${name}.yml`]);
      expect(r.code, name).toBe(valid ? 0 : 2);
      expect(r.stdout, name).toBe(
        expected
          .slice(0, -2)
          .map((line) => `${line}\n`)
          .join(''),
      );
      const json = await runBinary(['gate', 'validate', '-f', `${name}.yml`, '--json']);
      expect(jsonLines(json.stdout).at(-1), name).toMatchObject({ valid, file: `${name}.yml` });
    }
  });

  it('a flag error exits 2: a human message, or one JSON error line under --json', async () => {
    const human = await runBinary(['gate', 'diff', '--nope']);
    expect(human).toMatchObject({ code: 2, stdout: '' });
    expect(human.stderr).toBe('Error: Unknown flag: --nope.\nSee `gds gate diff --help`.\n');
    const json = await runBinary(['gate', 'diff', '--nope', '--json']);
    expect(json).toMatchObject({ code: 2, stdout: '' });
    expect(jsonLines(json.stderr)).toEqual([
      {
        error: {
          code: 'usage',
          message: 'Unknown flag: --nope.',
          suggestion: 'See `gds gate diff --help`.',
          details: null,
        },
      },
    ]);
  });

  it('an unknown command off a terminal exits 2 with "did you mean" as a suggestion line', async () => {
    const r = await runBinary(['gate', 'dif']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('Error: Unknown command: gate dif.');
    expect(r.stderr).toContain('Did you mean `gds gate diff`?');
  });

  it('SIGINT: exit 130 with one JSON error line on stderr under --json', async () => {
    const child = spawn(gds, ['gate', 'diff', '-f', '-', '--against', 'a.yml', '--json'], {
      cwd: dir,
      env: { PATH: emptyPath, HOME: home, DEBUG: 'oclif:gds:gate:diff' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const result = collect(child);
    let stderr = '';
    await new Promise<void>((resolve) => {
      child.stderr?.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('interrupt handler installed')) resolve();
      });
      child.on('close', () => resolve());
    });
    child.kill('SIGINT');
    const r = await result;
    expect(r.code).toBe(130);
    expect(r.stdout).toBe('');
    const errors = r.stderr.split('\n').filter((line) => line.startsWith('{'));
    expect(errors.map((line) => JSON.parse(line) as unknown)).toEqual([
      { error: { code: 'interrupted', message: 'Interrupted.', suggestion: null, details: null } },
    ]);
  });

  it('the bash completion script loads and completes `gds gate ` to the gate commands', async () => {
    const script = await runBinary(['completion', 'bash']);
    expect(script).toMatchObject({ code: 0, stderr: '' });
    // the old name of the plugin the binary no longer bundles prints the same script
    expect(await runBinary(['autocomplete', 'bash'])).toEqual(script);
    await writeFile(join(dir, 'completion.bash'), script.stdout);
    // the script asks `gds __complete …` of the gds on the PATH: the binary alone
    const onPath = join(dir, 'gds-on-path');
    await mkdir(onPath, { recursive: true });
    await copyFile(gds, join(onPath, 'gds'));
    await chmod(join(onPath, 'gds'), 0o755);
    const check = spawn(
      '/bin/bash',
      [
        '-c',
        `PATH=${onPath}:$PATH; source ${join(dir, 'completion.bash')}; complete -p gds;` +
          'COMP_WORDS=(gds gate ""); COMP_CWORD=2; COMP_LINE="gds gate "; COMP_POINT=${#COMP_LINE};' +
          '_gds_complete; echo "reply: ${COMPREPLY[*]}"',
      ],
      { env: { PATH: '/usr/bin:/bin', HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const r = await collect(check);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/-F _gds_complete gds/);
    const words = Object.keys(COMMANDS)
      .filter((id) => id.startsWith('gate:'))
      .map((id) => id.split(':')[1]);
    const reply = (/reply: (.*)/.exec(r.stdout)?.[1] ?? '').split(' ');
    expect(reply.sort()).toEqual(words.sort());
  });
});

describe('on a terminal, colour is decided at run time', needs(noBuildTools), () => {
  function inTerminal(env: Record<string, string>): Promise<CliResult> {
    const child = spawn(
      '/usr/bin/script',
      ['-qec', `${gds} gate diff -f b.yml --against a.yml`, '/dev/null'],
      {
        cwd: dir,
        env: { PATH: '/usr/bin:/bin', HOME: home, TERM: 'xterm-256color', ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    child.stdin?.end();
    return collect(child);
  }

  it('colours the diff on a TTY, and not with NO_COLOR', async () => {
    const [tty, noColor] = await Promise.all([inTerminal({}), inTerminal({ NO_COLOR: '1' })]);
    expect(tty.code).toBe(1);
    expect(tty.stdout).toContain('\u001b[32m+');
    expect(noColor.code).toBe(1);
    expect(noColor.stdout).toContain('+++ b.yml');
    expect(noColor.stdout).not.toContain('\u001b[');
  });
});

describe(
  'dist/gds help pages rendered at build time (stdout and stderr not terminals)',
  needs(noBuildTools),
  () => {
    it.each([[['--help']], [['-h']], [['gate', '--help']], [['gate', 'diff', '--help']]])(
      'gds %j prints what oclif renders at run time',
      async (args) => {
        // OCLIF_COLUMNS sends the call to oclif (the page is not served); 80 is the width oclif uses off a terminal.
        const [served, rendered] = await Promise.all([
          runBinary(args),
          runBinary(args, { OCLIF_COLUMNS: '80' }),
        ]);
        expect(served).toMatchObject({ code: 0, stderr: '' });
        expect(served.stdout).toContain('USAGE\n');
        expect(served.stdout).toBe(rendered.stdout);
      },
    );

    it('are not served when oclif would render them otherwise (another width)', async () => {
      const longest = (text: string) => Math.max(...text.split('\n').map((line) => line.length));
      const [wide, served] = await Promise.all([
        runBinary(['gate', 'diff', '--help'], { OCLIF_COLUMNS: '200' }),
        runBinary(['gate', 'diff', '--help']),
      ]);
      expect(wide).toMatchObject({ code: 0, stderr: '' });
      expect(longest(wide.stdout)).toBeGreaterThan(longest(served.stdout));
    });
  },
);

describe(
  'dist/gds help on a terminal: rendered by oclif once per width and colour, then served from the cache',
  needs(noBuildTools),
  () => {
    function helpInTerminal(
      args: string[],
      columns: number,
      env: Record<string, string> = {},
    ): Promise<CliResult> {
      const child = spawn(
        '/usr/bin/script',
        ['-qec', `stty cols ${columns}; exec ${gds} ${args.join(' ')}`, '/dev/null'],
        {
          cwd: dir,
          env: {
            PATH: '/usr/bin:/bin',
            HOME: home,
            TERM: 'xterm-256color',
            XDG_CACHE_HOME: join(dir, 'xdg'),
            ...env,
          },
          stdio: ['pipe', 'pipe', 'pipe'],
        },
      );
      child.stdin?.end();
      return collect(child);
    }
    const pages = async () =>
      (await readdir(join(dir, 'xdg'), { recursive: true, withFileTypes: true }))
        .filter((entry) => entry.isFile())
        .map((entry) => join(entry.parentPath, entry.name));

    it('the second call prints what oclif printed the first time, which is what oclif renders', async () => {
      await rm(join(dir, 'xdg'), { recursive: true, force: true });
      const first = await helpInTerminal(['gate', '--help'], 100);
      expect(first.code).toBe(0);
      expect(first.stdout).toContain('\u001b[1mUSAGE\u001b[22m');
      expect(await pages()).toHaveLength(1);
      const [second, oclif] = await Promise.all([
        helpInTerminal(['gate', '--help'], 100),
        // OCLIF_COLUMNS sends the call to oclif: neither served nor kept.
        helpInTerminal(['gate', '--help'], 100, { OCLIF_COLUMNS: '100' }),
      ]);
      expect(second).toMatchObject({ code: 0, stdout: first.stdout });
      expect(oclif).toMatchObject({ code: 0, stdout: first.stdout });
      expect(await pages()).toHaveLength(1);
      const [page = ''] = await pages();
      await writeFile(page, 'kept page\n');
      expect((await helpInTerminal(['gate', '--help'], 100)).stdout).toBe('kept page\r\n');
    });

    it('another width or NO_COLOR is another page, rendered by oclif', async () => {
      await rm(join(dir, 'xdg'), { recursive: true, force: true });
      const longest = (text: string) => Math.max(...text.split('\r\n').map((line) => line.length));
      const wide = await helpInTerminal(['gate', '--help'], 160);
      const narrow = await helpInTerminal(['gate', '--help'], 60);
      const plain = await helpInTerminal(['gate', '--help'], 60, { NO_COLOR: '1' });
      expect(narrow.stdout.split('\r\n').length).toBeGreaterThan(wide.stdout.split('\r\n').length);
      expect(longest(wide.stdout)).toBeGreaterThan(100);
      expect(plain.stdout).not.toContain('\u001b[');
      expect(narrow.stdout).toContain('\u001b[1m');
      expect(await pages()).toHaveLength(3);
      expect((await helpInTerminal(['gate', '--help'], 60, { NO_COLOR: '1' })).stdout).toBe(plain.stdout);
    });
  },
);

describe('dist/gds start-up', needs(noBuildTools), () => {
  // A command with a bundle of its own (scripts/sea/command-bundles.ts) runs it, with its own code cache (a
  // second one for --jq runs); help and every other command line run the whole bundle.
  const refused = ['--token', 'cli_startup', '--base', 'http://127.0.0.1:9'];
  it.each([
    [['gate', '--help'], 'gds.cjs, gds-help.cache'],
    [['gate', 'validate', '-f', 'a.yml'], 'command-gate-validate.cjs, command-gate-validate.cache'],
    [['--json', 'gate', 'validate', '-f', 'a.yml'], 'command-gate-validate.cjs, command-gate-validate.cache'],
    [
      ['gate', 'validate', 't_1', '-f', 'a.yml', ...refused],
      'command-gate-validate.cjs, command-gate-validate.cache',
    ],
    [['gate', 'validate', '-f', 'a.yml', '-h'], 'gds.cjs, gds-help.cache'],
    [['list', '--json', ...refused], 'command-list.cjs, command-list.cache'],
    [['list', '--jq', '.name | ascii_downcase', ...refused], 'command-list.cjs, command-list.jq.cache'],
    [['list', '-q.id', ...refused], 'command-list.cjs, command-list.jq.cache'],
    [['gate', 'get', 't_1', ...refused], 'gds.cjs, gds.cache'],
    [['push', 'v.sql', ...refused], 'command-push.cjs, command-push.cache'],
  ])('gds %j compiles %s, trained at build time (V8 accepts the cache)', async (args, assets) => {
    const r = await runBinary(args, { GDS_TEST_CODE_CACHE: '1' });
    expect(r.code).not.toBeNull();
    expect(r.stderr.split('\n')[0]).toBe(`code cache: accepted (${assets})`);
  });

  // oclif's `run` and `Command.run` would each load the config main() passes them again (scripts/bundle/rewrites.ts).
  it('gds list loads oclif’s config once', async () => {
    const r = await runBinary(['list', '--json', ...refused], { DEBUG: '*' });
    expect(r.code).toBe(9);
    expect(r.stderr).toContain('oclif:config');
    expect(r.stderr).not.toContain('reloading config');
  });
});

describe('dist/gds piped help', needs(noBuildTools), () => {
  // The boot script serves these pages without compiling the bundle; a page the build's training run lost
  // (it keeps none for a run that wrote to stderr) would be rendered by oclif at every call.
  it('the build keeps a page for the root, every topic and every command', async () => {
    const help = JSON.parse(await readFile(join(repoRoot, 'dist/sea-build/help.json'), 'utf8')) as {
      pages: Record<string, string>;
    };
    const ids = Object.keys(COMMANDS);
    const topics = ids.flatMap((id) =>
      id
        .split(':')
        .slice(0, -1)
        .map((_, i, words) => words.slice(0, i + 1)),
    );
    const wanted = [[], ...topics, ...ids.map((id) => id.split(':'))].map((words) =>
      JSON.stringify([...words, '--help']),
    );
    expect([...new Set(wanted)].filter((key) => help.pages[key] === undefined)).toEqual([]);
  });
});

describe('dist/gds start-up loads no heavy module', needs(noBuildTools), () => {
  const heavy =
    /\/node_modules\/(ajv|yaml|libpg-query|openid-client|ora|cli-truncate|jq-wasm|diff|@napi-rs)\//;

  async function evaluated(args: string[]): Promise<string[]> {
    const record = join(dir, `modules-${args.join('_').replace(/[^\w]/g, '')}.json`);
    const r = await runBinary(args, { GDS_TEST_LOADED_MODULES: record });
    expect(r.code).not.toBeNull();
    return JSON.parse(await readFile(record, 'utf8')) as string[];
  }

  it('gds --version answers from the boot script: the bundle is not even compiled', async () => {
    const record = join(dir, 'modules-version.json');
    const r = await runBinary(['--version'], { GDS_TEST_LOADED_MODULES: record, GDS_TEST_CODE_CACHE: '1' });
    expect(r).toMatchObject({ code: 0, stderr: '' });
    expect(existsSync(record)).toBe(false);
  });

  it.each([[['--help']], [['gate', '--help']], [['gate', 'diff', '--help']]])('gds %j', async (args) => {
    const modules = await evaluated(args);
    expect(modules.filter((m) => heavy.test(m))).toEqual([]);
  });

  // Their bundles hold the modules built on yaml, ajv and the diff library: each library loads when the work
  // needs it, not with the bundle.
  it.each([
    [['gate', 'status', 'job_1', '--gate', '1', '--token', 'cli_x', '--base', 'http://127.0.0.1:9']],
    [['push', 'missing.yml', '--token', 'cli_x', '--base', 'http://127.0.0.1:9']],
  ])('gds %j', async (args) => {
    const modules = await evaluated(args);
    expect(modules.filter((m) => heavy.test(m))).toEqual([]);
  });

  it('while the commands that need them do load them (the check can fail)', async () => {
    const diff = await evaluated(['gate', 'diff', '-f', 'a.yml', '--against', 'b.yml', '--semantic']);
    const names = new Set(diff.map((m) => heavy.exec(m)?.[1]).filter(Boolean));
    expect([...names].sort()).toEqual(['diff', 'yaml']);
  });

  it("push reads a view with PostgreSQL's grammar, from the executable itself, before any request", async () => {
    await writeFile(join(dir, 'v.sql'), 'CREATE VIEW analytics.v AS SELECT id AS constraint FROM t');
    await writeFile(join(dir, 'bad.sql'), "CREATE VIEW v\nCOMMENT = 'x' AS SELECT a FROM t");
    const network = ['--json', '--token', 'cli_startup', '--base', 'http://127.0.0.1:9'];
    const bad = await runBinary(['push', 'bad.sql', ...network]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(
      'bad.sql:2:1: PostgreSQL refuses the SQL: syntax error at or near \\"COMMENT\\"',
    );
    const modules = await evaluated(['push', 'v.sql', ...network]);
    expect(modules).toContain('/node_modules/libpg-query/wasm/index.cjs');
    const good = await runBinary(['push', 'v.sql', ...network]);
    expect(good.code).not.toBe(2);
    expect(good.stderr).not.toContain('v.sql:');
  });

  it("a network command loads no undici at all (neither its fetch nor Node's), nor HTTP/2: node:http alone", async () => {
    const modules = await evaluated([
      'list',
      '--json',
      '--token',
      'cli_startup',
      '--base',
      'http://127.0.0.1:9',
    ]);
    expect(modules).toContain('node:http');
    expect(modules).toContain('node:net');
    expect(
      modules.filter(
        (m) => m.includes('/undici/') || /^node:(internal\/deps\/undici|http2$|internal\/http2)/.test(m),
      ),
    ).toEqual([]);
  });

  // node:fs/promises loads readline's interface and the REPL's history at its top (build-binary.ts makes its
  // imports lazy; oclif reads theme.json with node:fs's synchronous call, the bounded file read with its callbacks).
  it.each([
    [['gate', 'validate', '-f', 'a.yml']],
    [['list', '--json', '--token', 'cli_startup', '--base', 'http://127.0.0.1:9']],
  ])('gds %j loads no node:fs/promises', async (args) => {
    const modules = await evaluated(args);
    expect(modules).toContain('node:fs');
    expect(modules.filter((m) => /^node:(internal\/)?fs\/promises$|readline|repl/.test(m))).toEqual([]);
  });

  // V8 is tuned for a streamed list from its second page on (output.ts, leanHeapForStreaming): a list of one
  // page prints without node:v8, a longer one still sets the flags.
  it.each([
    [1, false],
    [2, true],
  ])('gds list --json of %i page(s) served loads node:v8: %s', async (pages, loadsV8) => {
    const table = (n: number) => ({
      id: `tbl_${String(n).padStart(16, '0')}`,
      name: `t${n}`,
      mode: 'MODE_B',
      state: 'CERTIFIED',
      environmentLabel: 'dev',
      source: null,
      connectorId: null,
      artifactFile: null,
      project: null,
      gate: 'ADVISORY',
    });
    const server = createServer((request, response) => {
      const cursor = new URL(request.url ?? '/', 'http://localhost').searchParams.get('cursor');
      const page = cursor === null ? 1 : Number(cursor);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({ tables: [table(page)], nextCursor: page < pages ? String(page + 1) : null }),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
      const record = join(dir, `modules-list-${pages}-pages.json`);
      const r = await runBinary(['list', '--json', '--token', 'cli_startup', '--base', base], {
        GDS_TEST_LOADED_MODULES: record,
      });
      expect(r).toMatchObject({ code: 0, stderr: '' });
      expect(jsonLines(r.stdout)).toEqual(Array.from({ length: pages }, (_, i) => table(i + 1)));
      const modules = JSON.parse(await readFile(record, 'utf8')) as string[];
      expect(modules.includes('node:v8')).toBe(loadsV8);
    } finally {
      server.close();
    }
  });

  it('start-up loads no node:v8: it comes when WebAssembly runs (push parses its view)', async () => {
    const network = ['--json', '--token', 'cli_startup', '--base', 'http://127.0.0.1:9'];
    for (const args of [
      ['gate', 'validate', '-f', 'a.yml'],
      ['list', ...network],
    ]) {
      expect((await evaluated(args)).filter((m) => m === 'node:v8')).toEqual([]);
    }
    await writeFile(join(dir, 'v8.sql'), 'CREATE VIEW analytics.v AS SELECT id FROM t');
    expect(await evaluated(['push', 'v8.sql', ...network])).toContain('node:v8');
  });

  it('help loads neither undici nor node:crypto', async () => {
    const modules = await evaluated(['--help']);
    expect(modules.filter((m) => m.includes('/undici/') || m === 'node:crypto')).toEqual([]);
    expect(modules).toContain('node:fs');
  });

  it('gate validate loads the SQL parser only for a file with customPredicates, and still checks its SQL', async () => {
    const sqlParser = /\/node_modules\/libpg-query\//;
    await writeFile(
      join(dir, 'sql.yml'),
      'customPredicates:\n  - {name: p, sql: "pg_sleep(1) > 0", severity: WARN}\n',
    );
    expect((await evaluated(['gate', 'validate', '-f', 'a.yml'])).filter((m) => sqlParser.test(m))).toEqual(
      [],
    );
    // A plain comparison is decided without it (core/gate1/plain-predicate.ts).
    await writeFile(
      join(dir, 'plain.yml'),
      'customPredicates:\n  - {name: p, sql: "amount >= 0", severity: WARN}\n',
    );
    expect(
      (await evaluated(['gate', 'validate', '-f', 'plain.yml'])).filter((m) => sqlParser.test(m)),
    ).toEqual([]);
    const modules = await evaluated(['gate', 'validate', '-f', 'sql.yml']);
    // PostgreSQL's own parser checks the predicate (its WebAssembly from the executable's asset).
    expect(modules).toContain('/node_modules/libpg-query/wasm/index.cjs');
    const r = await runBinary(['gate', 'validate', '-f', 'sql.yml']);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('(sql-function-not-allowed)');
  });

  it("oclif's start loads neither node:child_process, node:perf_hooks, node:readline nor what errors, help and globs use", async () => {
    const modules = await evaluated(['gate', 'validate', '-f', 'a.yml']);
    expect(modules.filter((m) => /^node:(child_process|perf_hooks|readline|dgram)$/.test(m))).toEqual([]);
    const seldomUsed =
      /\/node_modules\/(ejs|tinyglobby|minimatch|lilconfig|wrap-ansi|clean-stack|cli-spinners|supports-color)\//;
    expect(modules.filter((m) => seldomUsed.test(m))).toEqual([]);
    const error = await runBinary(['gate', 'validate', '--nope']);
    expect(error).toMatchObject({ code: 2, stdout: '' });
    expect(error.stderr).toContain('Unknown flag: --nope');
  });

  it("oclif's debug lines still show under DEBUG, and `debug` loads only then", async () => {
    expect(
      (await evaluated(['gate', 'validate', '-f', 'a.yml'])).filter((m) => m.includes('/debug/')),
    ).toEqual([]);
    const r = await runBinary(['gate', 'validate', '-f', 'a.yml'], { DEBUG: 'oclif*' });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('oclif:config');
  });

  it('gate validate runs the build-time validator: ajv itself (its compiler) never loads', async () => {
    const modules = await evaluated(['gate', 'validate', '-f', 'a.yml']);
    expect(modules.some((m) => m.includes('/node_modules/yaml/'))).toBe(true);
    expect(
      modules.filter((m) => m.includes('/node_modules/ajv/') && !m.includes('/ajv/dist/runtime/')),
    ).toEqual([]);
  });
});

describe('the keychain addon inside the binary', needs(noBuildTools), () => {
  it('is written once to $XDG_CACHE_HOME/gds/native and loaded from there', async () => {
    const cache = join(dir, 'xdg-cache');
    const env = { GDS_TEST_KEYRING_PROBE: '1', XDG_CACHE_HOME: cache };
    const first = await runBinary([], env);
    expect(first.code).toBe(0);
    // The native code ran: with no D-Bus session in this environment it answers with its own error.
    expect(jsonLines(first.stdout)).toEqual([
      { asyncEntry: 'function', call: expect.stringMatching(/^refused: .*DBus/) as unknown },
    ]);
    const native = join(cache, 'gds/native');
    const files = await readdir(native);
    expect(files).toHaveLength(1);
    expect(files[0]).toMatch(/^keyring-[0-9a-f]{16}\.node$/);
    const addon = join(native, files[0] ?? '');
    const shipped = (await readdir(join(repoRoot, 'node_modules/@napi-rs'), { recursive: true })).find((f) =>
      f.endsWith('.node'),
    );
    expect(await readFile(addon)).toEqual(
      await readFile(join(repoRoot, 'node_modules/@napi-rs', shipped ?? '')),
    );
    const written = (await stat(addon)).mtimeMs;
    const second = await runBinary([], env);
    expect(second.stdout).toBe(first.stdout);
    expect((await stat(addon)).mtimeMs).toBe(written);
    expect(await readdir(native)).toEqual(files);
  });

  it('replaces a cached addon whose bytes do not match, and keeps the cache folder 0700', async () => {
    const cache = join(dir, 'xdg-cache-tampered');
    const env = { GDS_TEST_KEYRING_PROBE: '1', XDG_CACHE_HOME: cache };
    const first = await runBinary([], env);
    expect(first.code).toBe(0);
    const native = join(cache, 'gds/native');
    const [name] = await readdir(native);
    const addon = join(native, name ?? '');
    const genuine = await readFile(addon);
    await writeFile(addon, Buffer.concat([genuine.subarray(0, 1024), Buffer.from('tampered')]));
    await chmod(native, 0o755);

    const second = await runBinary([], env);
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toBe(first.stdout);
    expect(await readFile(addon)).toEqual(genuine);
    expect(await readdir(native)).toEqual([name]);
    expect((await stat(native)).mode & 0o777).toBe(0o700);
  });

  it('stores, reads back and deletes a secret in a real Secret Service (gnome-keyring on a private bus)', async ({
    skip,
  }) => {
    skip(noSecretServiceTools !== undefined, noSecretServiceTools);
    // dbus-run-session and gnome-keyring-daemon: Debian packages dbus-daemon and gnome-keyring.
    // The daemon takes the Secret Service's name on the bus after --unlock returns: a call before that made
    // D-Bus start a second daemon, which wrote its variables on the test's stdout (seen under load).
    const ownsSecrets =
      'dbus-send --session --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus ' +
      'org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q "boolean true"';
    const session =
      'echo -n probe | gnome-keyring-daemon --unlock --components=secrets >/dev/null && ' +
      `until ${ownsSecrets}; do sleep 0.1; done && ` +
      `GDS_TEST_KEYRING_PROBE=1 HOME=${home} PATH=${emptyPath} ${gds}`;
    const child = spawn('/usr/bin/dbus-run-session', ['--', '/bin/sh', '-c', session], {
      env: { PATH: '/usr/bin:/bin', HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const r = await collect(child);
    expect(r.code, r.stderr).toBe(0);
    expect(jsonLines(r.stdout)).toEqual([{ asyncEntry: 'function', call: 'round trip' }]);
  });

  it('goes to ~/.cache/gds/native without XDG_CACHE_HOME', async () => {
    const r = await runBinary([], { GDS_TEST_KEYRING_PROBE: '1' });
    expect(r.code).toBe(0);
    // (Beside it, PostgreSQL's parser, when a test before this one pushed a view.)
    const addons = await readdir(join(home, '.cache/gds/native'));
    expect(addons.filter((name) => !name.startsWith('pg-parser-'))).toEqual([
      expect.stringMatching(/^keyring-.+\.node$/),
    ]);
  });
});
