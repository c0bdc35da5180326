// The reference server for sign-in tests: contract checking on, a movable clock, a short device-flow
// interval, and helpers to talk OAuth (form bodies) and to play the person on the verification page.
import { setTimeout as sleep } from 'node:timers/promises';
import { withProfileLock } from '../../../src/auth/config.js';
import { saveProfile } from '../../../src/auth/profiles.js';
import type { ServerOptions } from '../../../src/server/app.js';
import { createServer } from '../../../src/server/app.js';
import type { DeviceFlowOptions } from '../../../src/server/oauth/settings.js';
import type { ReadyUser } from '../../../src/server/ready.js';
import {
  moveSeededTimes,
  scratchDir,
  SEED_SPAN_MS,
  seededPgliteCopy,
} from '../../helpers/migrated-database.js';

export interface OAuthTestServer {
  /** The REST base URL (the issuer, gds's --base). */
  url: string;
  /** The origin: /oauth/…, /device, /dashboard. */
  origin: string;
  users: ReadyUser[];
  user(role: ReadyUser['role']): ReadyUser;
  clock: { advance(ms: number): void };
  /** A form-encoded POST; the body parsed as JSON when it is JSON, else the text. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests index into bodies freely
  post(path: string, form: Record<string, string>): Promise<{ status: number; headers: Headers; body: any }>;
  /** The person on the verification page: POST /device. Returns the status and the page. */
  decide(
    userCode: string,
    email: string,
    action: 'approve' | 'deny',
  ): Promise<{ status: number; html: string }>;
  /** A whole device sign-in over HTTP (code, approval, token exchange) as the member with this e-mail. */
  signIn(email: string): Promise<IssuedSession>;
  /** Audit entries of the main workspace with this action. */
  auditCount(action: string): Promise<number>;
  /** Stops the server; throws when any response broke openapi.yaml. */
  close(): Promise<void>;
}

export interface IssuedSession {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

export async function startOAuthServer(
  deviceFlow: DeviceFlowOptions = {},
  options: Pick<ServerOptions, 'refreshGraceMs'> = {},
): Promise<OAuthTestServer> {
  let offset = 0;
  const clock = () => Date.now() + offset;
  // On a copy of the seeded database, as startTestServer's servers are (test/helpers/server.ts), its seed dated
  // at the start and ending before the server writes anything itself: an in-memory database unpacked, migrated
  // and seeded cost about 2 s of CPU a server.
  const copy = await seededPgliteCopy();
  const startedAt = clock();
  await sleep(SEED_SPAN_MS + 1);
  const running = await createServer({
    ...options,
    port: 0,
    contractCheck: true,
    clock,
    deviceFlow: { intervalSeconds: 1, expiresInSeconds: 60, ...deviceFlow },
    dataDir: copy.dataDir,
    scratchDir: await scratchDir(),
  }).catch(async (error: unknown) => {
    await copy.remove();
    throw error;
  });
  await moveSeededTimes(running.db, startedAt).catch(async (error: unknown) => {
    await running.close();
    await copy.remove();
    throw error;
  });
  const user = (role: ReadyUser['role']) => {
    const found = running.ready.users.find((u) => u.role === role);
    if (!found) throw new Error(`no seeded ${role}`);
    return found;
  };
  const server: OAuthTestServer = {
    url: running.url,
    origin: running.origin,
    users: running.ready.users,
    user,
    clock: {
      advance: (ms) => {
        offset += ms;
      },
    },
    async post(path, form) {
      const response = await fetch(`${running.origin}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form),
      });
      const text = await response.text();
      let body: unknown = text;
      if ((response.headers.get('content-type') ?? '').startsWith('application/json'))
        body = JSON.parse(text);
      return { status: response.status, headers: response.headers, body };
    },
    async decide(userCode, email, action) {
      const { status, body } = await server.post('/device', { user_code: userCode, email, action });
      return { status, html: String(body) };
    },
    async signIn(email) {
      const device = (await server.post('/oauth/device/code', { client_id: 'gds-cli' })).body;
      const decided = await server.decide(device.user_code, email, 'approve');
      const tokens = await server.post('/oauth/token', {
        grant_type: 'urn:ietf:params:oauth:grant-type:device_code',
        device_code: device.device_code,
        client_id: 'gds-cli',
      });
      if (decided.status !== 200 || tokens.status !== 200) {
        throw new Error(`signIn: ${decided.status} ${tokens.status} ${JSON.stringify(tokens.body)}`);
      }
      return tokens.body as IssuedSession;
    },
    async auditCount(action) {
      const response = await fetch(
        `${running.url}/api/workspace/audit-log?eventType=${encodeURIComponent(action)}&limit=200`,
        { headers: { authorization: `Bearer ${user('OWNER').cliToken}` } },
      );
      const page = (await response.json()) as { entries: unknown[] };
      return page.entries.length;
    },
    async close() {
      await running.close();
      await copy.remove();
      const violations = running.contract?.violations ?? [];
      if (violations.length > 0) {
        const lines = violations.map((v) => `${v.method} ${v.url} -> ${v.status}: ${v.problems.join('; ')}`);
        throw new Error(`responses that break src/contract/openapi.yaml:\n${lines.join('\n')}`);
      }
    },
  };
  return server;
}

/** Writes a session profile as `gds auth login` does (the secrets where env's GDS_SECRET_STORAGE says). */
export async function writeSessionProfile(
  env: NodeJS.ProcessEnv,
  name: string,
  serverUrl: string,
  secrets: { accessToken: string; refreshToken?: string },
  expiresAt: string,
): Promise<void> {
  await withProfileLock(name, () => saveSessionProfile(env, name, serverUrl, secrets, expiresAt), { env });
}

/** writeSessionProfile without the profile lock, as an older gds or a process that lost the lock writes. */
export async function saveSessionProfile(
  env: NodeJS.ProcessEnv,
  name: string,
  serverUrl: string,
  secrets: { accessToken: string; refreshToken?: string },
  expiresAt: string,
): Promise<void> {
  const fields = {
    kind: 'session' as const,
    base: serverUrl,
    issuer: serverUrl,
    tokenEndpoint: new URL('/oauth/token', serverUrl).toString(),
    clientId: 'gds-cli',
    expiresAt,
  };
  await saveProfile(name, fields, secrets, { env });
}
