// A session bus that accepts and never answers cannot hang gds. The keychain addon blocks
// the thread that calls it while D-Bus is silent (gds auth set and whoami waited 20-45 s, deaf to the 3 s
// timeout and to Ctrl-C), so every keychain call runs in a child process gds kills at
// GDS_KEYCHAIN_TIMEOUT_MS (default 3 s) and falls back as before. The times are printed, not asserted: the
// 15 s guards only catch a hang.
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand, cliEnv, collect, ensureBuilt, runCli } from '../cli/helpers/cli-process.js';
import type { CliResult } from '../cli/helpers/cli-process.js';

const token = 'cli_HungBusTokenNeverPrinted';
const GUARD_MS = 15_000;
let dir: string;
let bus: Server;
const sockets: Socket[] = [];
let busAddress: string;
let folders = 0;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(join(tmpdir(), 'gds-hung-bus-'));
  const path = join(dir, 'bus.sock');
  // Accepts every connection and never writes a byte: D-Bus's authentication waits forever.
  bus = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    socket.resume(); // read (and drop) what comes, so the peer's end is seen
  });
  await new Promise<void>((resolve) => bus.listen(path, resolve));
  busAddress = `unix:path=${path}`;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => bus?.close(resolve));
  await rm(dir, { recursive: true, force: true });
});

function freshConfigDir(): string {
  folders += 1;
  return join(dir, `c${folders}`, 'gds');
}

async function timed(run: () => Promise<CliResult>): Promise<CliResult & { ms: number }> {
  const started = performance.now();
  const result = await run();
  const ms = performance.now() - started;
  return { ...result, ms };
}

const hungEnv = (cfg: string, extra: Record<string, string | undefined> = {}) => ({
  GDS_CONFIG_DIR: cfg,
  GDS_SECRET_STORAGE: undefined,
  GDS_KEYCHAIN_TIMEOUT_MS: undefined,
  DBUS_SESSION_BUS_ADDRESS: busAddress,
  XDG_STATE_HOME: join(cfg, 'state'),
  ...extra,
});

describe('a D-Bus session bus that accepts and never answers', () => {
  it('gds auth set gives up after the default 3 s and stores the token in the 0600 file, saying so', async () => {
    const cfg = freshConfigDir();
    const r = await timed(() =>
      runCli(['auth', 'set', '--no-verify', '--token', token, '--base', 'https://hung.example'], {
        env: hungEnv(cfg),
      }),
    );
    console.info(`gds auth set with a hung session bus: ${r.ms.toFixed(0)} ms (timeout 3,000 ms)`);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`The token is stored in the config file ${join(cfg, 'config.json')}.`);
    expect(r.stderr).toMatch(/^Warning: No OS keychain answered, so the token is stored in /);
    expect(r.stdout + r.stderr).not.toContain(token);
    expect(JSON.parse(await readFile(join(cfg, 'config.json'), 'utf8')).profiles.default.token).toBe(token);
    expect(r.ms).toBeLessThan(GUARD_MS);
  });

  it('GDS_SECRET_STORAGE=keychain: exit 1 naming the timeout, nothing written', async () => {
    const cfg = freshConfigDir();
    const r = await timed(() =>
      runCli(['auth', 'set', '--no-verify', '--token', token, '--base', 'https://hung.example', '--json'], {
        env: hungEnv(cfg, { GDS_SECRET_STORAGE: 'keychain', GDS_KEYCHAIN_TIMEOUT_MS: '500' }),
      }),
    );
    console.info(`gds auth set (keychain only, 500 ms timeout): ${r.ms.toFixed(0)} ms`);
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({
      error: {
        code: 'keychain_unavailable',
        message:
          'The secret storage is set to keychain, but the OS keychain did not answer: no answer to a write within 500 ms (is it locked?).',
      },
    });
    await expect(readFile(join(cfg, 'config.json'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('reading a profile kept in the keychain ends too (auth status names the storage problem)', async () => {
    const cfg = freshConfigDir();
    await mkdir(cfg, { recursive: true, mode: 0o700 });
    const account = `default@${cfg}`;
    await writeFile(
      join(cfg, 'config.json'),
      JSON.stringify({
        version: 1,
        activeProfile: 'default',
        profiles: {
          default: {
            kind: 'static',
            base: 'https://hung.example',
            secretRef: { store: 'keychain', service: 'gds-cli', account },
          },
        },
      }),
      { mode: 0o600 },
    );
    const r = await timed(() =>
      runCli(['auth', 'status', '--offline', '--json'], {
        env: hungEnv(cfg, { GDS_KEYCHAIN_TIMEOUT_MS: '500' }),
      }),
    );
    console.info(
      `gds auth status (a keychain profile, 500 ms timeout): ${r.ms.toFixed(0)} ms, exit ${r.code}`,
    );
    expect(r.ms).toBeLessThan(GUARD_MS);
    expect(`${r.stdout}${r.stderr}`).toMatch(/did not answer: no answer to a read within 500 ms/);
  });

  it('Ctrl-C during the keychain call ends gds at once with 130, and the keychain process with it', async () => {
    const cfg = freshConfigDir();
    const [command, args] = cliCommand([
      'auth',
      'set',
      '--no-verify',
      '--token',
      token,
      '--base',
      'https://hung.example',
    ]);
    const earlier = sockets.length;
    const child = spawn(command, args, {
      env: cliEnv(hungEnv(cfg, { GDS_KEYCHAIN_TIMEOUT_MS: '60000' })),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const result = collect(child);
    // Wait until the keychain child is running (it holds a connection to the bus), then interrupt.
    for (let waited = 0; sockets.length === earlier || waited < 300; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (waited > GUARD_MS) break;
    }
    const ours = () => sockets.slice(earlier).filter((s) => !s.destroyed && !s.closed);
    const before = ours().length;
    const started = performance.now();
    child.kill('SIGINT');
    const r = await result;
    const ms = performance.now() - started;
    console.info(`Ctrl-C during a hung keychain call: gds ended ${ms.toFixed(0)} ms later, exit ${r.code}`);
    expect(before).toBeGreaterThan(0);
    expect(r.code).toBe(130);
    expect(ms).toBeLessThan(GUARD_MS);
    // The keychain process is gone: its connection to the bus closes.
    for (let waited = 0; waited < 5_000; waited += 50) {
      if (ours().length === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(ours()).toHaveLength(0);
  });
});
