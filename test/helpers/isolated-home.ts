// A setup file of vitest (vitest.config.ts, setupFiles): every test file runs with a home folder of its own,
// made empty in the temp folder before the file is loaded and removed after it. gds finds its files from the
// home folder when nothing else names them (core/folders.ts: GDS_CONFIG_DIR, else $XDG_CONFIG_HOME/gds,
// else ~/.config/gds; the caches under ~/.cache, import state under ~/.local/state), and a test that gives a
// function a bare environment (`env: {}`) or runs the CLI with the inherited one would otherwise read the
// settings, aliases and profiles of whoever runs the tests (`gds settings set color always` fails the
// colour tests) and write into their folders. Child processes inherit this home: the CLI, and the tools
// the tests start (less, fish, Chromium leave their own files in a home). A test of the fallbacks gives
// HOME of its own, or reads this one through os.homedir().
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** HOME of the process that started vitest (vitest.config.ts), which no test may read or write. */
    invokingHome: string;
  }
}

const home = mkdtempSync(join(tmpdir(), 'gds-test-home-'));
// The variables that name where gds keeps its files; unset, each falls back into the home folder.
for (const name of ['GDS_CONFIG_DIR', 'XDG_CONFIG_HOME', 'XDG_CACHE_HOME', 'XDG_STATE_HOME'])
  delete process.env[name];
// dbt's settings gds reads as dbt does (plan's selection): a developer's own would change what the tests see.
for (const name of ['DBT_PROFILES_DIR', 'DBT_INDIRECT_SELECTION', 'DBT_LOG_PATH']) delete process.env[name];
process.env.HOME = home;
process.env.USERPROFILE = home; // os.homedir() on Windows

afterAll(() => rmSync(home, { recursive: true, force: true }));
