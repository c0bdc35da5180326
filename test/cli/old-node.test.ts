// gds on a Node.js older than 22.3 (Debian's 20 is still common): one sentence on stderr and exit 1,
// no SyntaxError and no stack trace. Run with the machine's own old Node for real.
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { needs, noOldNode, oldNode } from '../helpers/skip.js';
import { cliEntry, cliEnv, collect } from './helpers/cli-process.js';

describe('bin/run.js on an old Node', needs(noOldNode), () => {
  it.each([['--version'], ['list', '--json'], []])(
    'gds %s says which Node it needs and exits 1',
    async (...args) => {
      const node = oldNode?.path ?? 'node';
      const child = spawn(node, [cliEntry, ...args], { env: cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
      const result = await collect(child);
      expect(result).toMatchObject({ code: 1, stdout: '' });
      expect(result.stderr).toBe(
        `gds needs Node.js 22.3 or later (this is ${oldNode?.version}). Install a newer Node, or use the single executable.\n`,
      );
    },
  );
});
