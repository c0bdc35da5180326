// A global setup of vitest (vitest.config.ts, globalSetup): the whole run's temp folder is one folder of its own,
// removed when the run ends. Tests make their folders with mkdtemp(tmpdir()) and many leave them (a describe
// whose tests all skip runs no afterAll; a file stopped by a failure or its timeout runs none): on a CI machine
// that runs the suite for months, /tmp grew by hundreds of folders and hundreds of MB a run. The test processes
// (forked after this runs) and everything they start inherit TMPDIR, which os.tmpdir() reads on every call.
import { mkdtempSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => Promise<void> {
  const previous = process.env.TMPDIR;
  const folder = mkdtempSync(join(tmpdir(), 'gds-test-run-'));
  process.env.TMPDIR = folder;
  return async () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    // A process a test started may still be writing in it as the run ends (ENOTEMPTY): rm tries again.
    await rm(folder, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 }).catch(
      (error: unknown) => {
        process.stderr.write(`The run's temp folder ${folder} was not removed: ${String(error)}\n`);
      },
    );
  };
}
