// SIGTERM (a cancelled CI job) or Ctrl-C after the service answered a refresh, while the keychain does not
// answer gds's write of the new tokens (a busy or stuck session bus, a locked keyring). Under the default
// secret storage (auto) the write is given up after GDS_KEYCHAIN_TIMEOUT_MS (3 s) and the tokens go to the
// 0600 config file instead; the held signal must wait for that, not end gds after its 2 s bound with the
// keychain process killed and the only copy of the rotated tokens gone (the service has spent the old one).
import { createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useKillHarness } from '../helpers/kill-harness.js';
import {
  auditList,
  auditListOn,
  expiredProfile,
  signalledMidRefresh,
  startGds,
  storedRefreshToken,
} from './refresh-kill-harness.js';

const used = useKillHarness();

describe('a signal during a refresh whose keychain write gets no answer', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s: the rotated tokens reach the config file before gds exits',
    async (signal) => {
      const { configDir, refreshToken } = await expiredProfile(
        used.harness,
        used.template,
        signal === 'SIGTERM' ? 200 : 201,
      );
      // A session bus that takes the connection and never answers.
      const bus = join(configDir, 'bus');
      const silent = createServer(() => undefined);
      await new Promise<void>((resolve) => silent.listen(bus, resolve));
      try {
        // The service spends the token and answers; gds hears the answer only after the signal.
        const killed = await signalledMidRefresh(
          used.harness,
          refreshToken,
          (env) =>
            startGds(auditList, configDir, {
              GDS_SECRET_STORAGE: 'auto',
              DBUS_SESSION_BUS_ADDRESS: `unix:path=${bus}`,
              ...env,
            }),
          signal,
        );
        expect(killed.code, killed.stderr).toBe(signal === 'SIGINT' ? 130 : 143);
        expect(await storedRefreshToken(configDir)).not.toBe(refreshToken);
      } finally {
        silent.close();
      }
      const after = await auditListOn(configDir);
      expect(after.code, after.stderr).toBe(0);
    },
    120_000,
  );
});
