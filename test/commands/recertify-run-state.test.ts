// The state `gds recertify` keeps of a run sent in parts (under $XDG_STATE_HOME/gds/recertify), against the
// in-process server. A run of 1,001 rebuilt models goes as three signals (500, 500, 1); a run is stopped
// part-way by a client that fails its nth signal before sending it. What the audit found:
// 1. two runs of the same command at once: the second's save dropped the parts the first had kept;
// 2. a state file cut short or edited crashed the run or was trusted silently;
// 3. a state that could not be written made a run whose every signal was applied exit 1;
// 4. two workspaces sharing the folder saw each other's progress, and the second skipped parts it never sent.
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stateWorkspace } from '../../src/services/recertify-state.js';
import { recertifyToken } from '../helpers/certified-copies.js';
import type { RunFiles } from '../helpers/recertify-runs.js';
import { recertifyRun, runFiles } from '../helpers/recertify-runs.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

const MODELS = 1_001;

describe('the state of a recertify run sent in parts', () => {
  let server: TestServer;
  let tokens: [string, string];
  const names = Array.from({ length: MODELS }, (_, i) => `st_${i + 1}`);

  beforeAll(async () => {
    server = await startTestServer({ jobs: 'manual', workspaces: 2 });
    const other = await server.request('POST', '/api/integration/tokens', {
      token: server.workspace(1).user('ADMIN').accessToken,
      body: { name: 'ci-recertify', env: 'dev', scopes: ['workspace:write:recertify'] },
    });
    expect(other.status).toBe(201);
    tokens = [
      await recertifyToken(server),
      (other.body as { tokens: { accessToken: string } }).tokens.accessToken,
    ];
  }, 300_000);

  afterAll(async () => {
    await server?.close();
  });

  const setUp = (invocation: string) => runFiles(names, invocation);
  const run = (
    paths: RunFiles,
    options: { token?: string; stopAt?: number; beforeFirst?: () => Promise<unknown> } = {},
  ) => recertifyRun(server, options.token ?? tokens[0], paths, options);

  const gds = (args: string[], env: Record<string, string>, token = tokens[0]) =>
    runInProcess(['recertify', ...args], {
      env: { SERVICE_API_URL: server.url, SERVICE_TOKEN: token, ...env },
    });

  it('two runs at once: neither loses the parts the other kept', async () => {
    const paths = await setUp('inv-state-merge');
    // A reads no state, then waits at its first signal while B signals parts 1 and 2 and stops at 3.
    let b: Awaited<ReturnType<typeof run>> | undefined;
    const a = await run(paths, {
      stopAt: 2,
      beforeFirst: async () => {
        b = await run(paths, { stopAt: 3 });
      },
    });
    expect(b?.error).toBeDefined();
    expect(a.error).toBeDefined();
    // A kept part 1 after B kept parts 1 and 2: the state still has both.
    const again = await run(paths);
    expect(again.warnings).toEqual([
      expect.objectContaining({ code: 'resumed', message: expect.stringContaining('Parts 1, 2 of the 3') }),
    ]);
    expect(again.sent).toBe(1);
    expect(again.response).toMatchObject({ submitted: MODELS });
    // Done: nothing left behind, not even a temporary file.
    expect(await readdir(paths.stateFolder)).toEqual([]);
  });

  it('the state file is written whole, 0600, and holds the workspace, never the token', async () => {
    const paths = await setUp('inv-state-file');
    expect((await run(paths, { stopAt: 2 })).error).toBeDefined();
    const [name, ...others] = await readdir(paths.stateFolder);
    expect(others).toEqual([]);
    const path = join(paths.stateFolder, name as string);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain(tokens[0]);
    expect(JSON.parse(text)).toMatchObject({
      version: 1,
      service: server.url,
      workspace: `ws:${server.workspace(0).ready.workspaceId}`,
    });
  });

  it.each([
    ['cut short', (text: string) => text.slice(0, Math.floor(text.length / 2))],
    ['edited into another shape', (text: string) => text.replaceAll('"outcomes":[', '"outcomes":7,"was":[')],
  ])('a state file %s: one warning naming it, and the whole run is sent', async (_, spoil) => {
    const paths = await setUp(`inv-state-spoilt-${_.length}`);
    expect((await run(paths, { stopAt: 2 })).error).toBeDefined();
    const [name] = await readdir(paths.stateFolder);
    const path = join(paths.stateFolder, name as string);
    await writeFile(path, spoil(await readFile(path, 'utf8')));

    const r = await gds(['--run-results', paths.file, '--env', 'dev'], { XDG_STATE_HOME: paths.stateHome });
    expect(r.code, r.stderr.slice(0, 600)).toBe(0);
    const lines = r.stderr.split('\n').filter((l) => l.includes(path));
    expect(lines, r.stderr.slice(0, 1500)).toHaveLength(1);
    expect(lines[0]).toMatch(/ignored, and this run sends every part/);
    expect(r.stderr).not.toContain('signalled by an earlier gds recertify');
    expect(r.stderr).toContain('Environment dev: 1001 submitted');
  });

  it('a state that cannot be written is a warning: the run exits as its signals did', async () => {
    const paths = await setUp('inv-state-unwritable');
    // XDG_STATE_HOME a file, not a folder: no state folder can be made in it (as root too).
    await writeFile(paths.stateHome, '');
    const json = await gds(['--run-results', paths.file, '--env', 'dev', '--json'], {
      XDG_STATE_HOME: paths.stateHome,
    });
    expect(json.code, json.stderr.slice(0, 600)).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ submitted: MODELS });
    const warnings = json.stderr
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { warning?: { code: string; message: string } });
    expect(warnings.filter((w) => w.warning?.code === 'state_not_kept')).toHaveLength(1);

    const human = await gds(['--run-results', paths.file, '--env', 'dev'], {
      XDG_STATE_HOME: paths.stateHome,
    });
    expect(human.code, human.stderr.slice(0, 600)).toBe(0);
    expect(human.stderr).toMatch(/could not be kept in .*recertify/);
    expect(human.stderr).toContain('Environment dev: 1001 submitted');
  });

  it('another workspace sharing the folder sends every part of its own run', async () => {
    const paths = await setUp('inv-state-workspaces');
    // Workspace 0 signalled part 1 and stopped.
    expect((await run(paths, { stopAt: 2 })).error).toBeDefined();
    // Workspace 1, the same run results and folder: nothing of workspace 0's progress is its own.
    const r = await gds(
      ['--run-results', paths.file, '--env', 'dev', '--json'],
      { XDG_STATE_HOME: paths.stateHome },
      tokens[1],
    );
    expect(r.code, r.stderr.slice(0, 600)).toBe(0);
    expect(r.stderr).not.toContain('resumed');
    const other = await run(paths, { token: tokens[1] });
    expect(other.warnings).toEqual([]);
    expect(other.sent).toBe(3);
    // Workspace 0's progress is still its own.
    const again = await run(paths);
    expect(again.warnings).toEqual([expect.objectContaining({ code: 'resumed' })]);
    expect(again.sent).toBe(2);
  });

  it('an opaque token is kept as a hash of it, never the token', () => {
    const opaque = 'cli_0123456789abcdef0123456789abcdef';
    expect(stateWorkspace(opaque)).toMatch(/^token:[0-9a-f]{16}$/);
    expect(stateWorkspace(opaque)).not.toContain('0123456789abcdef0123');
    expect(stateWorkspace(tokens[0])).toBe(`ws:${server.workspace(0).ready.workspaceId}`);
  });

  it('a JWT without a ws claim is kept by its issuer and subject, so the token of the next hour finds the state', () => {
    const jwt = (claims: object) =>
      `eyJhbGciOiJIUzI1NiJ9.${Buffer.from(JSON.stringify(claims)).toString('base64url')}.c2ln`;
    const now = jwt({ iss: 'https://idp', sub: 'ci-bot', exp: 1 });
    const later = jwt({ iss: 'https://idp', sub: 'ci-bot', exp: 3601 });
    expect(stateWorkspace(now)).toMatch(/^sub:[0-9a-f]{16}$/);
    expect(stateWorkspace(later)).toBe(stateWorkspace(now));
    expect(stateWorkspace(jwt({ iss: 'https://idp', sub: 'other' }))).not.toBe(stateWorkspace(now));
    expect(stateWorkspace(now)).not.toContain('ci-bot');
  });
});
