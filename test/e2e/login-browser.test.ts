// The browser opens only on a desktop terminal: under a pseudo-terminal with DISPLAY set, gds hands
// the verification address to xdg-open (a fake one on PATH here, which records it); without a display
// it does not try; with a display but no opener at all, the sign-in still succeeds from the printed code.
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import type { OAuthTestServer } from '../server/oauth/oauth-server.js';
import { startOAuthServer } from '../server/oauth/oauth-server.js';

let server: OAuthTestServer;
let dir: string;
let fakeBin: string;
const basePath = '/usr/local/bin:/usr/bin:/bin';

beforeAll(async () => {
  [server, dir] = await Promise.all([
    startOAuthServer({ intervalSeconds: 1 }),
    mkdtemp(join(tmpdir(), 'gds-browser-')),
    ensureBuilt(),
  ]);
  fakeBin = join(dir, 'bin');
  await mkdir(fakeBin);
  const opener = join(fakeBin, 'xdg-open');
  await writeFile(opener, '#!/bin/sh\nprintf "%s\\n" "$1" >> "$OPENED_FILE"\n');
  await chmod(opener, 0o755);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await server.close();
});

async function loginInTerminal(name: string, env: Record<string, string | undefined>) {
  const opened = join(dir, `${name}.opened`);
  const { child, result } = runInTerminal(
    `${cliCommand(['auth', 'login', '--base', server.url]).flat().join(' ')}`,
    {
      GDS_CONFIG_DIR: join(dir, name),
      GDS_SECRET_STORAGE: 'file',
      OPENED_FILE: opened,
      DISPLAY: undefined,
      WAYLAND_DISPLAY: undefined,
      ...env,
    },
  );
  let seen = '';
  const code = await new Promise<string>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      seen += chunk.toString('utf8');
      const match = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(seen);
      if (match?.[1]) resolve(match[1]);
    });
    void result.then((r) => reject(new Error(`gds ended before showing a code:\n${r.stdout}`)));
  });
  expect((await server.decide(code, 'owner@example.com', 'approve')).status).toBe(200);
  const done = await result;
  return { code, done, opened: existsSync(opened) ? await readFile(opened, 'utf8') : null };
}

describe('opening the browser', () => {
  it('hands the verification address to xdg-open on a desktop terminal', async () => {
    const { code, done, opened } = await loginInTerminal('desktop', {
      DISPLAY: ':99',
      PATH: `${fakeBin}:${basePath}`,
    });
    expect(done.code).toBe(0);
    expect(opened).toBe(`${server.origin}/device?user_code=${code}\n`);
  });

  it('does not try without a display', async () => {
    const { done, opened } = await loginInTerminal('headless', { PATH: `${fakeBin}:${basePath}` });
    expect(done.code).toBe(0);
    expect(opened).toBeNull();
  });

  it('still signs in when a display is set but no opener exists', async () => {
    const { done } = await loginInTerminal('no-opener', { DISPLAY: ':99', PATH: basePath });
    expect(done.code).toBe(0);
    expect(done.stdout).toMatch(/Signed in as \S+@example\.com \(\w+\) to http/);
  });
});
