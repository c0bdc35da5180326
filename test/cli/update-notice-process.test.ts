// The update notice through gds's start-up (main.ts), in a real process on a pseudo-terminal: a package whose
// gds.updateUrl names a latest.json on loopback. The command's own request is answered only once gds has
// kept the check's answer, so the check ends before the command with no timing involved.
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliUnderTest, ensureBuilt, node24, repoRoot, runInTerminal } from './helpers/cli-process.js';

let dir: string;
let server: Server;
let base: string;
let latestAsked = 0;
/** The state folder whose update.json the API answer waits for (undefined: answer at once). */
let waitFor: string | undefined;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-update-process-'));
  server = createServer((request, response) => {
    if (request.url === '/latest.json') {
      latestAsked += 1;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ version: '9.9.9', url: 'https://releases.example.com/gds/v9.9.9' }));
      return;
    }
    void (async () => {
      while (waitFor !== undefined && !existsSync(join(waitFor, 'gds', 'update.json'))) await sleep(20);
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  // The package as installed, but naming that latest.json: its own package.json beside the built dist/.
  const pjson = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8')) as Record<string, unknown>;
  await mkdir(join(dir, 'package', 'bin'), { recursive: true });
  await writeFile(
    join(dir, 'package', 'package.json'),
    JSON.stringify({ ...pjson, gds: { updateUrl: `${base}/latest.json` } }),
  );
  await copyFile(join(repoRoot, 'bin/run.js'), join(dir, 'package', 'bin', 'run.js'));
  await symlink(join(repoRoot, 'dist'), join(dir, 'package', 'dist'));
  await symlink(join(repoRoot, 'node_modules'), join(dir, 'package', 'node_modules'));
});

afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

async function onTerminal(state: string, extra: Record<string, string | undefined>) {
  const line = [
    node24,
    join(dir, 'package', 'bin', 'run.js'),
    'api',
    '/api/me',
    '--base',
    base,
    '--token',
    'cli_x',
  ]
    .map((word) => `'${word}'`)
    .join(' ');
  const { result } = runInTerminal(line, {
    XDG_STATE_HOME: state,
    GDS_CONFIG_DIR: join(dir, 'config'),
    CI: undefined,
    GDS_NO_UPDATE_NOTIFIER: undefined,
    ...extra,
  });
  const r = await result;
  return { code: r.code, text: r.stdout.replaceAll('\r\n', '\n') };
}

describe.runIf(cliUnderTest === undefined)(
  'the update notice of a package that names a release source',
  () => {
    it('is said on a terminal after the command, and the answer is kept', async () => {
      const state = join(dir, 'state-terminal');
      waitFor = state;
      const r = await onTerminal(state, {});
      expect(r.code).toBe(0);
      expect(r.text).toContain('"ok"');
      expect(r.text).toContain('A new release of gds is available: 0.1.0 → 9.9.9');
      expect(r.text.indexOf('"ok"')).toBeLessThan(r.text.indexOf('A new release'));
      expect(JSON.parse(await readFile(join(state, 'gds', 'update.json'), 'utf8'))).toMatchObject({
        latest: { version: '9.9.9' },
      });
    });

    it.each([
      ['CI', { CI: 'true' }],
      ['GDS_NO_UPDATE_NOTIFIER', { GDS_NO_UPDATE_NOTIFIER: '1' }],
    ])('is never asked for with %s set', async (_name, extra) => {
      waitFor = undefined;
      const before = latestAsked;
      const r = await onTerminal(join(dir, `state-${_name}`), extra);
      expect(r.code).toBe(0);
      expect(r.text).not.toContain('A new release');
      expect(latestAsked).toBe(before);
    });
  },
);
