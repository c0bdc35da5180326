// Browser sign-in and session refresh against an in-memory reference server: one device sign-in over
// HTTP (code, approval, token), one refresh under the profile lock (lock, re-read, grant, atomic write),
// and 16 `gds whoami` processes started at once on an expired profile (wall time until the last exits;
// every one must exit 0). Secrets in the file (GDS_SECRET_STORAGE=file).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, withProfileLock } from '../../src/auth/config.js';
import { saveProfile } from '../../src/auth/profiles.js';
import { refreshUnderLock } from '../../src/auth/refresh.js';
import { createServer } from '../../src/server/app.js';
import { medianMs } from './lib/measure.js';
import type { BenchModule } from './types.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const node = join(root, 'node_modules/.bin/node');
const rounds = 20;

function whoami(env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(node, ['bin/run.js', 'whoami', '--json'], { cwd: root, env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`whoami exited ${code}`))));
  });
}

export const run: BenchModule = async () => {
  const server = await createServer({ port: 0, deviceFlow: { intervalSeconds: 1, expiresInSeconds: 60 } });
  const dir = await mkdtemp(join(tmpdir(), 'gds-bench-login-'));
  const env = { GDS_CONFIG_DIR: dir, GDS_SECRET_STORAGE: 'file' };
  const form = async (path: string, body: Record<string, string>) => {
    const response = await fetch(`${server.origin}${path}`, {
      method: 'POST',
      body: new URLSearchParams(body),
    });
    return (await response.json().catch(() => ({}))) as Record<string, string>;
  };
  const signIn = async () => {
    const device = await form('/oauth/device/code', { client_id: 'gds-cli' });
    await fetch(`${server.origin}/device`, {
      method: 'POST',
      body: new URLSearchParams({
        user_code: device.user_code ?? '',
        email: 'owner@example.com',
        action: 'approve',
      }),
    });
    return form('/oauth/token', {
      grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
      device_code: device.device_code ?? '',
      client_id: 'gds-cli',
    });
  };
  const save = async (tokens: Record<string, string>, expiresAt: string) => {
    const fields = {
      kind: 'session' as const,
      base: server.url,
      issuer: server.url,
      tokenEndpoint: `${server.origin}/oauth/token`,
      expiresAt,
    };
    const secrets = { accessToken: tokens.access_token ?? '', refreshToken: tokens.refresh_token ?? '' };
    await withProfileLock('default', () => saveProfile('default', fields, secrets, { env }), { env });
  };
  try {
    const signInMs = await medianMs(rounds, signIn);
    await save(await signIn(), new Date(Date.now() + 3600_000).toISOString());
    const refreshMs = await medianMs(rounds, async () => {
      const profile = (await loadConfig({ env })).profiles.default;
      await refreshUnderLock('default', profile?.accessToken ?? '', true, { env });
    });
    const profile = (await loadConfig({ env })).profiles.default;
    await save(
      { access_token: profile?.accessToken ?? '', refresh_token: profile?.refreshToken ?? '' },
      new Date(Date.now() - 60_000).toISOString(),
    );
    const started = performance.now();
    await Promise.all(Array.from({ length: 16 }, () => whoami({ ...process.env, ...env })));
    const parallelMs = performance.now() - started;
    return [
      {
        section: 'login',
        name: 'device sign-in over HTTP (code, approve, token)',
        value: `${signInMs.toFixed(1)} ms`,
        note: `median of ${rounds}, server in process`,
      },
      {
        section: 'login',
        name: 'refresh under the profile lock (grant + atomic write)',
        value: `${refreshMs.toFixed(1)} ms`,
        note: `median of ${rounds}`,
      },
      {
        section: 'login',
        name: '16 parallel gds whoami on an expired profile',
        value: `${parallelMs.toFixed(0)} ms`,
        note: 'wall time until the last exits (all exit 0)',
      },
    ];
  } finally {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  }
};
