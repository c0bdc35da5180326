// A global setup of vitest (vitest.config.ts, globalSetup): the whole run's temp folder is one folder of its own,
// removed when the run ends. Tests make their folders with mkdtemp(tmpdir()) and many leave them (a describe
// whose tests all skip runs no afterAll; a file stopped by a failure or its timeout runs none): on a CI machine
// that runs the suite for months, /tmp grew by hundreds of folders and hundreds of MB a run. The test processes
// (forked after this runs) and everything they start inherit TMPDIR, which os.tmpdir() reads on every call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function setup(): () => void {
  const previous = process.env.TMPDIR;
  const folder = mkdtempSync(join(tmpdir(), 'gds-test-run-'));
  process.env.TMPDIR = folder;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(folder, { recursive: true, force: true, maxRetries: 3 });
  };
}
