// A CI job killed in the middle of a token refresh must not brick its integration profile. 100 real gds
// processes, each renewing the integration token of its own profile (stored by `gds tokens issue
// --save-profile`), are killed (SIGKILL, SIGINT or SIGTERM) at a point of the refresh: while the service's answer
// is held back by a proxy (the refresh token is spent, gds has not heard), just after the answer reached
// it (saving), or at a random moment. Right after each, a normal `gds audit list --profile ci` must work.
// GDS_KILL_RUNS sets how many: the single executable's pass in CI runs 20, `npm test` the full 100.
import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, cliEnv, collect, ensureBuilt, repoRoot, runCli } from '../cli/helpers/cli-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from '../helpers/server.js';

const RUNS = Number(process.env.GDS_KILL_RUNS ?? 100);
const PARALLEL = 6;
/** How long the proxy holds the service's answer to a refresh marked `hold`. */
const HOLD_MS = 300;

let server: TestServer;
let proxy: Server;
let proxyUrl: string;
let dir: string;
/** What the proxy does with the first refresh that presents a given refresh token. */
const plans = new Map<string, { mode: 'hold' | 'pass'; answered: () => void }>();

beforeAll(async () => {
  [server] = await Promise.all([startTestServer({ refreshGraceMs: 30_000 }), ensureBuilt()]);
  dir = await mkdtemp(join(tmpdir(), 'gds-e2e-kill-'));
  proxy = createServer((req, res) => void forward(req, res));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 120_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

/** Passes a request on to the test server; a planned refresh's answer is held back or reported. */
async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks);
  const headers = Object.fromEntries(
    Object.entries(req.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)),
  ) as Record<string, string>;
  const upstream = await fetch(`${server.url}${req.url}`, {
    method: req.method,
    headers,
    ...(body.length > 0 ? { body } : {}),
  });
  const text = await upstream.text();
  let plan;
  if (req.url === '/api/integration/refresh') {
    const presented = (JSON.parse(body.toString('utf8')) as { refreshToken: string }).refreshToken;
    plan = plans.get(presented);
    plans.delete(presented);
  }
  const reply = () => {
    if (res.destroyed) return;
    res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'text/plain' });
    res.end(text);
  };
  if (plan?.mode === 'hold') {
    plan.answered();
    await sleep(HOLD_MS);
    reply();
  } else {
    reply();
    plan?.answered();
  }
}

interface Kill {
  /** hold: kill while the answer is held back; pass: kill just after it was sent; any: at a random time. */
  at: 'hold' | 'pass' | 'any';
  signal: 'SIGKILL' | 'SIGINT' | 'SIGTERM';
}

const kills: Kill[] = [
  { at: 'hold', signal: 'SIGKILL' },
  { at: 'hold', signal: 'SIGINT' },
  { at: 'hold', signal: 'SIGTERM' },
  { at: 'pass', signal: 'SIGKILL' },
  { at: 'pass', signal: 'SIGINT' },
  { at: 'any', signal: 'SIGKILL' },
  { at: 'any', signal: 'SIGINT' },
];

const auditList = ['audit', 'list', '--profile', 'ci', '--limit', '1', '--json'];

/** A config folder whose profile `ci` is what `tokens issue --save-profile ci` stores, its access token
 *  marked expired so that the next command refreshes first. */
async function expiredProfile(template: Record<string, unknown>, n: number) {
  const issued = await server.issueToken('OWNER', {
    name: `kill-${n}`,
    env: 'dev',
    scopes: ['workspace:read:audit'],
  });
  const configDir = join(dir, `run-${n}`);
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

function start(args: string[], configDir: string) {
  const [command, argv] = cliCommand(args);
  const child = spawn(command, argv, {
    cwd: repoRoot,
    env: cliEnv({ GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { child, result: collect(child) };
}

interface Outcome {
  n: number;
  kill: Kill;
  killed: CliResult;
  after: CliResult;
  refreshTokenChanged: boolean;
}

async function killDuringRefresh(template: Record<string, unknown>, n: number): Promise<Outcome> {
  const kill = kills[n % kills.length] as Kill;
  const { configDir, refreshToken } = await expiredProfile(template, n);
  let answered!: () => void;
  const heard = new Promise<void>((resolve) => (answered = resolve));
  if (kill.at !== 'any') plans.set(refreshToken, { mode: kill.at, answered });
  const { child, result } = start(auditList, configDir);
  if (kill.at === 'any') {
    await Promise.race([sleep(Math.random() * 600), result]);
  } else {
    await Promise.race([heard, result]);
    if (kill.at === 'pass') await sleep(Math.random() * 30);
  }
  child.kill(kill.signal);
  const killed = await result;
  plans.delete(refreshToken);
  const saved = JSON.parse(await readFile(join(configDir, 'config.json'), 'utf8')) as {
    profiles: { ci: { refreshToken: string } };
  };
  const after = await runCli(auditList, { env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' } });
  return { n, kill, killed, after, refreshTokenChanged: saved.profiles.ci.refreshToken !== refreshToken };
}

describe('killing gds during the refresh of an integration profile', () => {
  it(`${RUNS} kills (SIGKILL, SIGINT, SIGTERM, at every point of the refresh): no profile is bricked`, async () => {
    // The profile exactly as `gds tokens issue --save-profile` stores it.
    const templateDir = join(dir, 'template');
    const issue = await runCli(
      ['tokens', 'issue', '--name', 'template', '--env', 'dev', '--scope', 'workspace:read:audit'].concat([
        '--save-profile',
        'ci',
        '--json',
      ]),
      {
        env: {
          GDS_CONFIG_DIR: templateDir,
          GDS_SECRET_STORAGE: 'file',
          SERVICE_API_URL: proxyUrl,
          SERVICE_TOKEN: server.user('OWNER').cliToken,
        },
      },
    );
    expect(issue.code, issue.stderr).toBe(0);
    const template = (
      JSON.parse(await readFile(join(templateDir, 'config.json'), 'utf8')) as {
        profiles: { ci: Record<string, unknown> };
      }
    ).profiles.ci;
    expect(template).toMatchObject({ kind: 'integration', base: proxyUrl });

    const outcomes: Outcome[] = [];
    for (let first = 0; first < RUNS; first += PARALLEL) {
      const batch = Array.from({ length: Math.min(PARALLEL, RUNS - first) }, (_, i) => first + i);
      outcomes.push(...(await Promise.all(batch.map((n) => killDuringRefresh(template, n)))));
    }

    const bricked = outcomes.filter((o) => o.after.code !== 0);
    expect(
      bricked.map((o) => `run ${o.n} (${o.kill.at}, ${o.kill.signal}): ${o.after.code} ${o.after.stderr}`),
    ).toEqual([]);
    // Every later command got a well-formed answer.
    for (const o of outcomes)
      expect(JSON.parse(o.after.stdout.trim().split('\n')[0] ?? '')).toBeTypeOf('object');
    // SIGINT or SIGTERM while the answer was on its way: gds waited for it, saved the new pair, then
    // exited 130 or 143.
    const interruptedWhileHeld = outcomes.filter((o) => o.kill.at === 'hold' && o.kill.signal !== 'SIGKILL');
    expect(interruptedWhileHeld.length).toBeGreaterThan(0);
    for (const o of interruptedWhileHeld) {
      expect(o.killed.code, o.killed.stderr).toBe(o.kill.signal === 'SIGINT' ? 130 : 143);
      expect(o.refreshTokenChanged).toBe(true);
    }
  }, 600_000);
});
