// The resume state of a `gds recertify` run (src/services/recertify-state.ts), read and written directly: two
// saves of one run at once, a temporary file removed by another run before its rename, and the files an
// earlier gds left in the folder.
import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RecertifyResponse } from '../../src/contract/types.js';
import type { RunStateWarning } from '../../src/services/recertify-state.js';
import { openRunState } from '../../src/services/recertify-state.js';

const KEYS = ['gds-recertify-a', 'gds-recertify-b', 'gds-recertify-c'];
const answer = (submitted: number): RecertifyResponse => ({
  environmentLabel: 'dev',
  submitted,
  governed: 0,
  outcomes: [],
});

async function stateHome() {
  const home = await mkdtemp(join(tmpdir(), 'gds-recertify-state-'));
  return { env: { XDG_STATE_HOME: home }, folder: join(home, 'gds', 'recertify') };
}

const open = (env: NodeJS.ProcessEnv, warnings: RunStateWarning[] = []) =>
  openRunState({ service: 'https://gds.example', token: 'opaque-token', env }, KEYS, (w) => warnings.push(w));

describe('the resume state of a recertify run', () => {
  it('two saves of the same run at once keep both parts', async () => {
    // Each round: two processes of one run, each with the state it read at its start (none), save at once.
    for (let round = 0; round < 10; round += 1) {
      const { env, folder } = await stateHome();
      const warnings: RunStateWarning[] = [];
      const [a, b] = await Promise.all([open(env, warnings), open(env, warnings)]);
      await Promise.all([a.save(new Map([[0, answer(1)]])), b.save(new Map([[1, answer(2)]]))]);
      expect(warnings).toEqual([]);
      const [name] = (await readdir(folder)).filter((n) => n.endsWith('.json'));
      const state = JSON.parse(await readFile(join(folder, name as string), 'utf8')) as {
        answered: Record<string, RecertifyResponse>;
      };
      expect(Object.keys(state.answered).sort()).toEqual([KEYS[0], KEYS[1]]);
      expect((await open(env)).answered.map(([i]) => i).sort()).toEqual([0, 1]);
    }
  });
});
