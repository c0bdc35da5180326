// README's "Try it by hand", run as written: its shell blocks are taken from README.md and run by bash
// against `npm run server`, with `gds` on the PATH as the installed CLI would be. Three changes: so that
// parallel runs never meet, the server gets `--port 0` and a ready file in a temp folder, and the README's
// http://127.0.0.1:8787 becomes the port it got; and `--device-interval 1`, so that the sign-in's polls
// come a second apart instead of five. Nobody is there to approve the sign-in, so the test does what the
// /device page's form does: a POST of the code and the e-mail the README names.
import { spawn } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import { guardGroup } from '../helpers/group-guard.js';

const README_URL = 'http://127.0.0.1:8787/v1';
const README_ORIGIN = 'http://127.0.0.1:8787';

/** The ```sh blocks of the README section `## title`, in order. */
function shellBlocks(readme: string, title: string): { text: string; blocks: string[] } {
  const start = readme.indexOf(`\n## ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "## ${title}" section`);
  const end = readme.indexOf('\n## ', start + 1);
  const text = readme.slice(start, end < 0 ? undefined : end);
  const blocks = [...text.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1] ?? '');
  return { text, blocks };
}

let dir: string;
let section: { text: string; blocks: string[] };
let server: { url: string; origin: string; stop(): Promise<void>; stdout(): string } | undefined;
let env: NodeJS.ProcessEnv;
const project = () => join(dir, 'project');

function startServer(commandLine: string, readyFile: string): Promise<NonNullable<typeof server>> {
  // `npm run server` as the README says, in its own process group so the whole group can be stopped.
  const child = spawn(
    'sh',
    ['-c', `${commandLine} -- --port 0 --ready-file ${readyFile} --device-interval 1`],
    {
      cwd: repoRoot,
      env: cliEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    },
  );
  // Its group ends with this test process, however that ends (group-guard.ts), unless it has closed first.
  const guard = guardGroup(child.pid, { output: [child.stdout, child.stderr] });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const closed = new Promise<void>((resolve) =>
    child.on('close', () => {
      guard.release();
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const origin = /listening on (http:\/\/\S+)/.exec(stdout)?.[1];
      const url = /^ {2}REST +(http:\/\/\S+)/m.exec(stdout)?.[1];
      if (origin && url && stdout.includes('next, sign in')) {
        resolve({
          url,
          origin,
          stdout: () => stdout,
          async stop() {
            process.kill(-(child.pid ?? 0), 'SIGTERM');
            await closed;
          },
        });
      }
    });
    void closed.then(() => reject(new Error(`the server ended before it listened:\n${stdout}${stderr}`)));
  });
}

/** Runs README lines with bash, as typed into a terminal, stopping at the first failing command. */
function bash(script: string): Promise<CliResult> {
  const child = spawn('bash', ['-c', `set -euo pipefail\n${script}`], {
    cwd: project(),
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return collect(child);
}

beforeAll(async () => {
  section = shellBlocks(await readFile(join(repoRoot, 'README.md'), 'utf8'), 'Try it by hand');
  dir = await mkdtemp(join(tmpdir(), 'gds-by-hand-'));
  const bin = join(dir, 'bin');
  await Promise.all([
    mkdir(bin),
    mkdir(project()),
    mkdir(join(dir, 'home')),
    mkdir(join(dir, 'ready'), { mode: 0o700 }),
  ]);
  // The installed gds: the CLI under test (node bin/run.js on Node 24, or dist/gds in CI's binary run).
  const [command, args] = cliCommand([]);
  await writeFile(
    join(bin, 'gds'),
    `#!/bin/sh\nexec '${command}' ${args.map((a) => `'${a}'`).join(' ')} "$@"\n`,
  );
  await chmod(join(bin, 'gds'), 0o755);
  env = cliEnv({
    PATH: `${bin}:${process.env.PATH ?? ''}`,
    HOME: join(dir, 'home'),
    GDS_CONFIG_DIR: join(dir, 'config'),
    GDS_SECRET_STORAGE: 'file',
    XDG_CACHE_HOME: join(dir, 'cache'),
    GDS_BROWSER: 'false',
    NO_COLOR: '1',
  });
  const [build, start] = section.blocks[0]?.trim().split('\n') ?? [];
  expect(build).toBe('npm run build');
  await ensureBuilt();
  server = await startServer(start ?? '', join(dir, 'ready', 'ready.json'));
});

afterAll(async () => {
  await server?.stop();
  if (dir !== undefined) await rm(dir, { recursive: true, force: true });
});

describe('README: Try it by hand', () => {
  it('starts the server, which says what to run next', () => {
    expect(section.blocks[0]?.trim()).toBe('npm run build\nnpm run server');
    const login = section.blocks[1]?.trim() ?? '';
    expect(server?.stdout()).toContain(`  ${login.replace(README_URL, server?.url ?? '')}\n`);
  });

  it('signs in with --no-browser, approved on /device with the fields and the user the README names', async () => {
    const url = server?.url ?? '';
    const login = section.blocks[1]?.trim() ?? '';
    expect(login).toBe(`gds auth login --base ${README_URL} --no-browser`);
    expect(section.text).toContain(`Open \`${README_ORIGIN}/device\``);
    const page = await (await fetch(`${server?.origin ?? ''}/device`)).text();
    for (const field of ['Code', 'E-mail', 'Approve']) expect(section.text).toContain(`**${field}**`);
    expect(page).toContain('<label for="user_code">Code</label>');
    expect(page).toContain('<label for="email">E-mail</label>');
    expect(page).toContain('<button name="action" value="approve">Approve</button>');
    const email = /\*\*E-mail\*\*: use `([^`]+)`/.exec(section.text)?.[1] ?? '';
    expect(email).toBe('steward@example.com');

    const child = spawn('bash', ['-c', login.replace(README_URL, url)], {
      cwd: project(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = collect(child);
    let stderr = '';
    const code = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        const match = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr);
        if (match?.[1]) resolve(match[1]);
      });
      void result.then((r) => reject(new Error(`gds auth login ended without a code:\n${r.stderr}`)));
    });
    // What the form on /device sends when the person presses Approve.
    const approval = await fetch(`${server?.origin ?? ''}/device`, {
      method: 'POST',
      body: new URLSearchParams({ user_code: code, email, action: 'approve' }),
    });
    expect(approval.status).toBe(200);
    const done = await result;
    expect(done.code, done.stderr).toBe(0);
  });

  it('lists, pushes a seeded warehouse object, applies and runs Gate 1, submits and certifies', async () => {
    const url = server?.url ?? '';
    const [, , listing, lifecycle] = section.blocks;
    const listed = await bash((listing ?? '').replaceAll(README_URL, url));
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('steward@example.com');
    expect(listed.stdout).toContain('warehouse-dev');

    const run = await bash((lifecycle ?? '').replaceAll(README_URL, url));
    expect(run.code, `${run.stdout}\n${run.stderr}`).toBe(0);
    expect(run.stdout).toMatch(/Registered tbl_[0-9a-f]+ \(QUARANTINED\)/);
    expect(run.stdout).toContain('Gate 1 PASSED');
    expect(run.stdout).toContain('table now PENDING_REVIEW');
    expect(run.stderr).toMatch(/✓ Certified tbl_[0-9a-f]+/);
    // Word by word, so a table drawn for a terminal and a piped one (tab-separated) both match.
    expect(run.stdout).toMatch(/State\W+CERTIFIED/);
    expect(run.stdout).toMatch(/Source\W+analytics_dev\.stg_pipedrive__stages/);
    // The README's commands, a gds process each, one after another: seconds apiece on a loaded machine.
  });
});
