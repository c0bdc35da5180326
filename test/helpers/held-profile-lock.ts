// For tests of a save into a profile whose lock another gds holds: the lock held from the test, and a service
// that answers every request at once.
import { createServer } from 'node:http';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, updateConfig, withProfileLock } from '../../src/auth/config.js';
import { setStaticProfile } from '../../src/auth/profiles.js';

/** A service that answers every request at once with `body`. */
export async function answeringService(body: unknown) {
  const text = JSON.stringify(body);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(text));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Holds profile `name`'s lock, as another gds would, until the function returned is called. */
export async function holdProfileLock(name: string, env: NodeJS.ProcessEnv) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let entered!: () => void;
  const taken = new Promise<void>((resolve) => (entered = resolve));
  const holding = withProfileLock(
    name,
    async () => {
      entered();
      await released;
    },
    { env },
  );
  await taken;
  return async () => {
    release();
    await holding;
  };
}

/**
 * Holds the config file's lock, as another gds writing it would, until the function returned is called (at the
 * latest in `cleanup`).
 */
export async function holdConfigLock(env: NodeJS.ProcessEnv, cleanup: (() => Promise<void>)[]) {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let taken!: () => void;
  const holding = new Promise<void>((resolve) => (taken = resolve));
  const writing = updateConfig(
    async () => {
      taken();
      await released;
    },
    { env },
  );
  await holding;
  const letGo = async () => {
    release();
    await writing;
  };
  cleanup.push(letGo);
  return letGo;
}

/**
 * A config folder (secrets in the file) whose profile ci holds a static token, a service answering `answer`, and
 * ci's lock held by the test, as another gds would; what undoes them goes into `cleanup`. `before`: the config.
 */
export async function lockedProfileCi(answer: unknown, cleanup: (() => Promise<void>)[]) {
  const service = await answeringService(answer);
  cleanup.push(service.close);
  const configDir = join(await mkdtemp(join(tmpdir(), 'gds-locked-ci-')), 'gds');
  const env = { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' };
  await setStaticProfile({ name: 'ci', token: 'cli_oldProfileToken42', base: service.url }, { env });
  const before = await loadConfig({ env });
  cleanup.push(await holdProfileLock('ci', env));
  return { service, env, before };
}
