// A CI job killed in the middle of a token refresh must not brick its integration profile. A real gds
// process renewing the integration token of its own profile (stored by `gds tokens issue --save-profile`) is
// killed (SIGKILL, SIGINT or SIGTERM) at each point of the refresh where the profile's state differs, each
// reached for certain rather than by chance:
//   recorded: the refresh is recorded in the profile and sent, and the service never got it (the proxy holds
//             the request);
//   spent:    the service has spent the old refresh token and answered, and gds has not heard (the proxy
//             holds the answer);
//   heard:    gds has the new tokens and has not saved them (GDS_DEBUG's line for the answer is out, and the
//             test holds the config file's lock that saving needs).
// Right after each, a normal `gds audit list --profile ci` must work. SIGINT and SIGTERM wait for the answer
// and the save (at most 2 s), then exit 130 or 143. Many kills at random moments:
// test/binary/refresh-kill-random.test.ts.
import { readdir, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';
import { describe, expect, it } from 'vitest';
import { useKillHarness } from '../helpers/kill-harness.js';
import {
  auditList,
  auditListOn,
  expiredProfile,
  holdRefresh,
  startGds,
  storedRefreshToken,
} from './refresh-kill-harness.js';

const used = useKillHarness();

type Point = 'recorded' | 'spent' | 'heard';
type Signal = 'SIGKILL' | 'SIGINT' | 'SIGTERM';

const points: Point[] = ['recorded', 'spent', 'heard'];
const signals: Signal[] = ['SIGKILL', 'SIGINT', 'SIGTERM'];
const cases = points.flatMap((point) => signals.map((signal) => ({ point, signal })));

/** Holds the lock gds takes to write its config file (the options of src/auth/config.ts). */
function lockConfig(configDir: string) {
  const path = join(configDir, 'config.json');
  return lock(path, { lockfilePath: `${path}.lock`, realpath: false, stale: 5_000, update: 1_000 });
}

/** Dates every lock folder of `configDir` a minute back, as a holder that stopped refreshing it leaves it. */
async function ageLocks(configDir: string): Promise<void> {
  const refreshed = new Date(Date.now() - 60_000);
  for (const name of await readdir(configDir)) {
    if (name.endsWith('.lock')) await utimes(join(configDir, name), refreshed, refreshed);
  }
}

async function killAt(point: Point, signal: Signal, n: number) {
  const { harness, template } = used;
  const { configDir, refreshToken } = await expiredProfile(harness, template, n);
  let unlockConfig: (() => Promise<void>) | undefined;
  let release = () => undefined as void;
  let reached: (gds: ReturnType<typeof startGds>) => Promise<unknown>;
  if (point === 'heard') {
    harness.plans.set(refreshToken, {
      mode: 'pass',
      reached: () => undefined,
      beforeForward: async () => {
        unlockConfig = await lockConfig(configDir);
      },
    });
    reached = (gds) => gds.printed(/^gds: ← 200 POST \S+\/api\/integration\/refresh /m);
  } else {
    const held = holdRefresh(harness, refreshToken, point === 'recorded' ? 'stall' : 'hold');
    release = held.release;
    reached = held.reachedBy;
  }
  const gds = startGds(auditList, configDir, { GDS_DEBUG: '1' });
  await reached(gds);
  // Signalled first, answered after: gds holds the signal before it can see the answer. A request the
  // service never got stays unanswered until gds has ended.
  gds.child.kill(signal);
  if (point === 'spent') release();
  const killed = await gds.result;
  release();
  await unlockConfig?.();
  // A gds killed with SIGKILL leaves its profile's lock behind, taken over once stale (5 s without a refresh,
  // src/auth/config.ts): dated here as it is once that time has passed. test/binary/refresh-kill-random.test.ts
  // waits it out in real time.
  if (signal === 'SIGKILL') await ageLocks(configDir);
  harness.plans.delete(refreshToken);
  const refreshTokenChanged = (await storedRefreshToken(configDir)) !== refreshToken;
  const after = await auditListOn(configDir);
  return { killed, after, refreshTokenChanged };
}

describe.concurrent('killing gds during the refresh of an integration profile', () => {
  it.each(cases.map((c, n) => ({ ...c, n })))(
    '$signal when $point: the next command works',
    async ({ point, signal, n }) => {
      const { killed, after, refreshTokenChanged } = await killAt(point, signal, n);
      expect(after.code, after.stderr).toBe(0);
      expect(JSON.parse(after.stdout.trim().split('\n')[0] ?? '')).toBeTypeOf('object');
      if (signal === 'SIGKILL') {
        expect(killed.signal).toBe('SIGKILL');
        return;
      }
      expect(killed.code, killed.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
      // Once the service has answered, the new pair is saved before gds exits, unless the save itself
      // cannot finish within the bound (here: the test holds the lock it needs).
      expect(refreshTokenChanged).toBe(point === 'spent');
    },
    300_000,
  );
});
