// `gds tokens refresh|issue --save-profile ci` whose request the service accepts and never answers, and a second
// command on profile ci meanwhile: `gds auth logout --profile ci`, or a sign-in into ci. The save used to hold
// ci's lock from before the request to after the answer, so the second command waited the lock's ~20 s and
// failed with config_locked. The lock now covers only the save: the second command ends at once, and the answer
// that comes after it saves nothing over what that command left (a logged-out profile is not brought back, a
// sign-in is not replaced, nor a static token replaced by another of the same base), said as such: `tokens
// refresh`, whose answer is the only copy of the new tokens (the refresh token given is spent), shows them as it
// does without --save-profile; `tokens issue` names the token to revoke. The service here is a socket that takes
// the request and answers only when the test says so.
import type { Socket } from 'node:net';
import { createServer } from 'node:net';
import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/auth/config.js';
import { setStaticProfile } from '../../src/auth/profiles.js';
import { runInProcess } from '../helpers/run-in-process.js';
import { ndjson } from '../e2e/login-helpers.js';
import { integrationAnswers } from '../helpers/integration-answers.js';
import { profileChanges } from '../helpers/profile-changes.js';

/** A service that accepts each connection, reads the request and answers only through `answer`. */
async function heldService() {
  const sockets = new Set<Socket>();
  let received!: (socket: Socket) => void;
  const requested = new Promise<Socket>((resolve) => (received = resolve));
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
    socket.once('data', () => received(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requested,
    answer(socket: Socket, body: unknown) {
      const text = JSON.stringify(body);
      socket.end(
        `HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n` +
          `connection: close\r\n\r\n${text}`,
      );
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

const { tokens, issued } = integrationAnswers('tok_held42');

let closeService: (() => Promise<void>) | undefined;
afterEach(async () => {
  await closeService?.();
  closeService = undefined;
});

const commands = [
  {
    command: 'tokens refresh',
    args: ['tokens', 'refresh', '--refresh-token', '-', '--json'],
    input: 'tok_held42.oldRefreshSecret42',
    answer: { tokens },
    env: {},
    shows: true,
  },
  {
    command: 'tokens issue',
    args: ['tokens', 'issue', '--name', 'ci', '--env', 'dev', '--scope', 'workspace:read:audit'],
    input: undefined,
    answer: issued,
    env: { SERVICE_TOKEN: 'cli_personHeld42' },
    shows: false,
  },
];

describe.each(commands)('gds $command --save-profile ci waiting on a service that does not answer', (c) => {
  it.each(profileChanges)(
    '$what ends at once, and the late answer saves nothing over it',
    async (s) => {
      const service = await heldService();
      closeService = service.close;
      const configDir = join(await mkdtemp(join(tmpdir(), 'gds-held-save-')), 'gds');
      const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
      await setStaticProfile({ name: 'ci', token: 'cli_oldProfileToken42', base: service.url }, { env });

      const saving = runInProcess([...c.args, '--save-profile', 'ci', '--force'], {
        env: { ...env, ...c.env, SERVICE_API_URL: service.url, NO_COLOR: '1' },
        ...(c.input === undefined ? {} : { input: c.input }),
      });
      const socket = await Promise.race([
        service.requested,
        saving.then((r) => Promise.reject(new Error(`ended before its request: ${r.stderr}`))),
      ]);

      // The request is out and unanswered: the second command does not wait for it.
      const first = await Promise.race([
        s.run(env, service.url).then(() => 'second command ended'),
        saving.then(() => 'save ended'),
      ]);
      expect(first).toBe('second command ended');

      service.answer(socket, c.answer);
      const r = await saving;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr).toMatch(s.loggedOut ? /Profile ci was logged out/ : /Profile ci changed/);
      expect(r.stderr).toContain('tok_held42');
      expect(r.stderr).toMatch(/not saved/);
      for (const secret of [tokens.accessToken, tokens.refreshToken]) expect(r.stderr).not.toContain(secret);
      // The only copy of the refreshed tokens, as `tokens refresh --json` prints them; an issued token is not
      // shown (the person's own sign-in revokes it and issues another).
      expect(ndjson(r.stdout)).toEqual(c.shows ? [{ tokens }] : []);
      const config = await loadConfig({ env });
      s.left(config);
      expect(JSON.stringify(config)).not.toContain(tokens.refreshToken);
      if (Object.keys(config.profiles).length === 0)
        await expect(readFile(join(configDir, 'config.json'), 'utf8')).rejects.toMatchObject({
          code: 'ENOENT',
        });
    },
    60_000,
  );
});
