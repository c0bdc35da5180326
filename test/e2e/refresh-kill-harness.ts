// What the refresh-kill tests share: a test server with a 30 s refresh grace behind a proxy that can stop a
// given refresh at a chosen point (the request never reaches the service; the service has answered and the
// answer is held back; answered at once), config folders holding a profile `ci` exactly as
// `gds tokens issue --save-profile ci` stores it with its access token expired (so the next command refreshes
// first), and a gds process on one of them. The issue of the template and the command run after a kill are
// ordinary commands, run in the test process (runInProcess); the process killed is a process.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

export const auditList = ['audit', 'list', '--profile', 'ci', '--limit', '1', '--json'];

/** What the proxy does with the first refresh that presents a given refresh token. */
export interface RefreshPlan {
  /** stall: the request never reaches the service; hold: the service answers, the answer waits for
   *  `release`; pass: answered at once. */
  mode: 'stall' | 'hold' | 'pass';
  /** Told when the refresh reached the proxy (stall, hold) or was answered (pass). */
  reached: () => void;
  /** hold: the answer goes out once this settles; stall: the request is dropped then. */
  release?: () => Promise<unknown>;
  /** Runs before the request goes on to the service. */
  beforeForward?: () => Promise<void>;
}

export interface KillHarness {
  server: TestServer;
  proxyUrl: string;
  dir: string;
  plans: Map<string, RefreshPlan>;
  close(): Promise<void>;
}

export async function startKillHarness(): Promise<KillHarness> {
  const [server] = await Promise.all([startTestServer({ refreshGraceMs: 30_000 }), ensureBuilt()]);
  const dir = await mkdtemp(join(tmpdir(), 'gds-e2e-kill-'));
  const plans = new Map<string, RefreshPlan>();
  const proxy: Server = createServer((req, res) => void forward(server, plans, req, res));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    server,
    proxyUrl: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    dir,
    plans,
    async close() {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function forward(
  server: TestServer,
  plans: Map<string, RefreshPlan>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  let plan: RefreshPlan | undefined;
  if (req.url === '/api/integration/refresh') {
    const presented = (JSON.parse(body.toString('utf8')) as { refreshToken: string }).refreshToken;
    plan = plans.get(presented);
    plans.delete(presented);
  }
  if (plan?.mode === 'stall') {
    plan.reached();
    await plan.release?.();
    res.destroy();
    return;
  }
  await plan?.beforeForward?.();
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
  ) as Record<string, string>;
  const upstream = await fetch(`${server.url}${req.url}`, {
    method: req.method,
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
  const text = await upstream.text();
  if (plan?.mode === 'hold') {
    plan.reached();
    await plan.release?.();
  }
  if (!res.destroyed) {
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  }
  if (plan?.mode === 'pass') plan.reached();
}

/** The profile `ci` exactly as `gds tokens issue --save-profile ci` stores it (issued through the proxy). */
export async function savedProfileTemplate(harness: KillHarness): Promise<Record<string, unknown>> {
  const templateDir = join(harness.dir, 'template');
  const issue = await runInProcess(
    ['tokens', 'issue', '--name', 'template', '--env', 'dev', '--scope', 'workspace:read:audit'].concat([
      '--save-profile',
      'ci',
      '--json',
    ]),
    {
      env: {
        GDS_CONFIG_DIR: templateDir,
        GDS_SECRET_STORAGE: 'file',
        SERVICE_API_URL: harness.proxyUrl,
        SERVICE_TOKEN: harness.server.user('OWNER').cliToken,
      },
    },
  );
  expect(issue.code, issue.stderr).toBe(0);
  const template = (
    JSON.parse(await readFile(join(templateDir, 'config.json'), 'utf8')) as {
      profiles: { ci: Record<string, unknown> };
    }
  ).profiles.ci;
  expect(template).toMatchObject({ kind: 'integration', base: harness.proxyUrl });
  return template;
}

/** A config folder whose profile `ci` is the template's shape with a token of its own, its access token
 *  marked expired so that the next command refreshes first. */
export async function expiredProfile(harness: KillHarness, template: Record<string, unknown>, n: number) {
  const issued = await harness.server.issueToken('OWNER', {
    name: `kill-${n}`,
    env: 'dev',
    scopes: ['workspace:read:audit'],
  });
  const configDir = join(harness.dir, `run-${n}`);
  await mkdir(configDir, { recursive: true, mode: 0o700 });
  const profile = {
    ...template,
    tokenId: issued.id,
    accessToken: issued.tokens.accessToken,
    refreshToken: issued.tokens.refreshToken,
    expiresAt: new Date(Date.now() - 60_000).toISOString(),
    refreshExpiresAt: issued.tokens.refreshExpiresAt,
  };
  const config = { version: 1, activeProfile: 'ci', profiles: { ci: profile } };
  await writeFile(join(configDir, 'config.json'), JSON.stringify(config), { mode: 0o600 });
  return { configDir, refreshToken: issued.tokens.refreshToken };
}

/** The refresh token the profile `ci` of `configDir` holds now. */
export async function storedRefreshToken(configDir: string): Promise<string> {
  const saved = JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')) as {
    profiles: { ci: { refreshToken: string } };
  };
  return saved.profiles.ci.refreshToken;
}

/** Starts gds on the profile of `configDir`. `printed(re)` settles once its stderr matches `re`, and fails
 *  when gds ends first. */
export function startGds(
  args: string[],
  configDir: string,
  extraEnv: Record<string, string> = {},
  /** In a session of its own: see refresh-stopped.test.ts. */
  detached = false,
) {
  const [command, argv] = cliCommand(args);
  const child = spawn(command, argv, {
    cwd: repoRoot,
    env: cliEnv({ GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file', ...extraEnv }),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached,
  });
  const result = collect(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: string) => (stderr += chunk));
  const printed = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!re.test(stderr)) return;
        child.stderr?.off('data', check);
        resolve();
      };
      child.stderr?.on('data', check);
      check();
      void result.then((r) => reject(new Error(`gds ended (${r.code}) before printing ${re}:\n${r.stderr}`)));
    });
  return { child, result, printed };
}

/** A normal run of `gds audit list --profile ci` on the profile of `configDir`. */
export function auditListOn(configDir: string) {
  return runInProcess(auditList, { env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' } });
}

/**
 * Holds the proxy's answer to the refresh that presents `refreshToken` (hold: the service has answered; stall:
 * the service never gets the request) until `release()`. `reachedBy(gds)` settles once that refresh reached the
 * proxy, and fails when gds ends first.
 */
export function holdRefresh(harness: KillHarness, refreshToken: string, mode: 'hold' | 'stall' = 'hold') {
  let reached!: () => void;
  const reachedProxy = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  harness.plans.set(refreshToken, { mode, reached, release: () => released });
  const reachedBy = (gds: ReturnType<typeof startGds>) =>
    Promise.race([
      reachedProxy,
      gds.result.then((r) => {
        throw new Error(`gds ended (${r.code}) before its refresh reached the proxy:\n${r.stderr}`);
      }),
    ]);
  return { release, reachedBy };
}

/**
 * Starts gds (`start`, given the environment to add: GDS_DEBUG=1) with the service's answer to a refresh of
 * `refreshToken` held: the service spends the token and answers, and gds hears the answer only once it has
 * taken `signal` (its debug line says it holds the signal; a signal sent with the answer may be read after it).
 * What gds did then.
 */
export async function signalledMidRefresh(
  harness: KillHarness,
  refreshToken: string,
  start: (env: Record<string, string>) => ReturnType<typeof startGds>,
  signal: NodeJS.Signals,
) {
  const held = holdRefresh(harness, refreshToken);
  const gds = start({ GDS_DEBUG: '1' });
  await held.reachedBy(gds);
  gds.child.kill(signal);
  await gds.printed(new RegExp(`${signal} held: the new tokens are saved first`));
  held.release();
  return gds.result;
}
