// gds on a Node.js older than 22.3 (Debian's 20 is still common): one sentence on stderr and exit 2, no
// SyntaxError and no stack trace; exit 1 under plan --detailed-exitcode, whose 2 means changes. Not 1
// elsewhere: that is the answer of gate diff (different), plan --exit-code (changes), gate run (a HARD_FAIL
// check failed) and the like, which a Node gds cannot run on must not give. Run with the machine's own old
// Node for real.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { needs, noOldNode, oldNode } from '../helpers/skip.js';
import { cliEntry, cliEnv, collect } from './helpers/cli-process.js';

describe('bin/run.js on an old Node', needs(noOldNode), () => {
  it.each([
    { code: 2, args: ['--version'] },
    { code: 2, args: ['list', '--json'] },
    { code: 2, args: [] },
    { code: 2, args: ['gate', 'diff', '-f', 'a.yml', '--against', 'a.yml'] },
    { code: 2, args: ['plan', '--dbt', '.', '--exit-code'] },
    { code: 1, args: ['plan', '--dbt', '.', '--detailed-exitcode'] },
    { code: 1, args: ['--profile', 'ci', '--json', 'a,b', 'plan', '--detailed-exitcode'] },
    { code: 1, args: ['plan', '-detailed-exitcode'] },
    { code: 1, args: ['plan', '--detailed-exitcode=true'] },
    // --detailed-exitcode is plan's: elsewhere, or after `--`, it is no flag, and 1 would be an answer there.
    { code: 2, args: ['gate', 'diff', 't_1', '-f', '--detailed-exitcode'] },
    { code: 2, args: ['gate', 'run', 't_1', '--detailed-exitcode'] },
    { code: 2, args: ['plan', '--dbt', '.', '--', '--detailed-exitcode'] },
  ])('gds $args says which Node it needs and exits $code', async ({ code, args }) => {
    const node = oldNode?.path ?? 'node';
    const child = spawn(node, [cliEntry, ...args], { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const result = await collect(child);
    expect(result).toMatchObject({ code, stdout: '' });
    expect(result.stderr).toBe(
      `gds needs Node.js 22.3 or later (this is ${oldNode?.version}). Install a newer Node, or use the single executable.\n`,
    );
  });
});
