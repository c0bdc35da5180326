// A gds stopped with Ctrl-Z (SIGTSTP) in the middle of refreshing its profile's tokens: its request is out (the
// service spent the refresh token and answered; the answer waits in the stopped process). Another gds on that
// profile took the stopped one's lock over once stale (5 s), then, the holder being alive, waited for it for as
// long as a refresh may take (~63 s), then presented the spent token again (refused: exit 3). It must instead say
// at once which process holds the refresh and what to do (config_locked); once that one is resumed, it saves the
// new tokens and the profile works.
// A gds whose refresh request gets no answer at all (an identity provider or a service that hangs) keeps its
// lock alive: another gds waits its bounded while (~20 s), then must name the process and say how to end it,
// not only "Another gds process has held the lock".
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { runInProcess } from '../helpers/run-in-process.js';
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

/** Settles once the process is stopped (Linux's /proc/PID/stat state T). */
async function untilStopped(pid: number): Promise<void> {
  for (;;) {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('T')) return;
    await sleep(20);
  }
}

/** Another `gds audit list` on the profile of `configDir`, which must end config_locked: its error. */
async function lockedOut(configDir: string) {
  const other = await runInProcess(auditList, {
    env: { GDS_CONFIG_DIR: configDir, GDS_SECRET_STORAGE: 'file' },
  });
  expect(other.code, other.stderr).toBe(1);
  const { error } = JSON.parse(other.stderr.trim().split('\n').at(-1) ?? '') as {
    error: { code: string; message: string; suggestion: string };
  };
  expect(error.code).toBe('config_locked');
  return error;
}

describe.runIf(process.platform === 'linux')(
  'another gds on a profile whose refresh is stopped or hung',
  () => {
    it('another gds says at once which process holds the refresh and how to resume it; resumed, it saves', async () => {
      const { configDir, refreshToken } = await expiredProfile(used.harness, used.template, 300);
      const held = holdRefresh(used.harness, refreshToken);
      // Stopped as Ctrl-Z leaves it (state T), but by SIGSTOP, in a session of its own: the kernel discards a
      // SIGTSTP sent to a process group no parent of the session holds (a CI job's, once the shell that started
      // it has gone), and sends SIGHUP then SIGCONT to a group that comes to be so while one of it is stopped.
      const stopped = startGds(auditList, configDir, {}, true);
      const pid = stopped.child.pid as number;
      try {
        await held.reachedBy(stopped);
        stopped.child.kill('SIGSTOP');
        await untilStopped(pid);
        // The answer goes out now, and waits unread in the stopped process.
        held.release();
        const error = await lockedOut(configDir);
        expect(error.message).toContain(`gds process ${pid} is stopped`);
        expect(error.suggestion).toContain(`kill -CONT ${pid}`);
        // Nothing was presented again: the stopped one's refresh token is still the one stored.
        expect(await storedRefreshToken(configDir)).toBe(refreshToken);
      } finally {
        held.release();
        stopped.child.kill('SIGCONT');
      }
      const resumed = await stopped.result;
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(await storedRefreshToken(configDir)).not.toBe(refreshToken);
      const after = await auditListOn(configDir);
      expect(after.code, after.stderr).toBe(0);
    }, 180_000);

    it('a refresh the service does not answer: another gds waits its bounded while, then names the process', async () => {
      const { configDir, refreshToken } = await expiredProfile(used.harness, used.template, 301);
      // The request reaches the proxy and gets no answer until the other run has ended.
      const held = holdRefresh(used.harness, refreshToken, 'stall');
      const hung = startGds(auditList, configDir);
      const pid = hung.child.pid as number;
      try {
        await held.reachedBy(hung);
        const error = await lockedOut(configDir);
        expect(error.message).toContain(`gds process ${pid} has held the lock of profile ci`);
        expect(error.suggestion).toContain(`kill ${pid}`);
      } finally {
        held.release();
      }
      // The stalled request fails; the refresh token was never spent, and the next run renews it.
      await hung.result;
      const after = await auditListOn(configDir);
      expect(after.code, after.stderr).toBe(0);
    }, 180_000);
  },
);
