// Many kills of gds during the refresh of an integration profile, at moments left to chance: while the
// service's answer is held back, just after it reached gds, or at a random moment. Right after each, a
// normal `gds audit list --profile ci` must work. test/e2e/refresh-kill.test.ts kills at each point of the
// refresh for certain, in `npm test`; this many-kills net runs where the single executable is built
// (`npm run test:e2e:binary`, GDS_KILL_RUNS kills, 20 by default).
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import {
  auditList,
  auditListOn,
  expiredProfile,
  savedProfileTemplate,
  startGds,
  storedRefreshToken,
} from '../e2e/refresh-kill-harness.js';
import { useKillHarness } from '../helpers/kill-harness.js';

const RUNS = Number(process.env.GDS_KILL_RUNS ?? 20);
const PARALLEL = 6;
/** How long the proxy holds the service's answer to a refresh marked `hold`. */
const HOLD_MS = 300;

const used = useKillHarness({ template: false });

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

interface Outcome {
  n: number;
  kill: Kill;
  killed: CliResult;
  after: CliResult;
  refreshTokenChanged: boolean;
}

async function killDuringRefresh(template: Record<string, unknown>, n: number): Promise<Outcome> {
  const kill = kills[n % kills.length] as Kill;
  const { configDir, refreshToken } = await expiredProfile(used.harness, template, n);
  let answered!: () => void;
  const heard = new Promise<void>((resolve) => (answered = resolve));
  if (kill.at !== 'any')
    used.harness.plans.set(refreshToken, { mode: kill.at, reached: answered, release: () => sleep(HOLD_MS) });
  const { child, result } = startGds(auditList, configDir);
  if (kill.at === 'any') {
    await Promise.race([sleep(Math.random() * 600), result]);
  } else {
    await Promise.race([heard, result]);
    if (kill.at === 'pass') await sleep(Math.random() * 30);
  }
  child.kill(kill.signal);
  const killed = await result;
  used.harness.plans.delete(refreshToken);
  const refreshTokenChanged = (await storedRefreshToken(configDir)) !== refreshToken;
  const after = await auditListOn(configDir);
  return { n, kill, killed, after, refreshTokenChanged };
}

describe('killing gds at random during the refresh of an integration profile', () => {
  it(`${RUNS} kills (SIGKILL, SIGINT, SIGTERM, at every point of the refresh): no profile is bricked`, async () => {
    const template = await savedProfileTemplate(used.harness);
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
