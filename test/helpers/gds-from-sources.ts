// A gds process run from its sources (bin/dev.js through tsx: no build, so no other change in the checkout keeps it
// from running) with GDS_DEBUG, for tests that act at a moment its debug log names (a signal sent, a lock let go).
import { spawn } from 'node:child_process';
import { cliEnv, collect, node24, repoRoot } from '../cli/helpers/cli-process.js';

/**
 * Starts gds with `args` and `env`. `said(text)` settles once its stderr holds `text` (a string, or a pattern: then
 * with its first group), and rejects when gds ended first; `before(promise, what)` likewise for another promise.
 */
export function startGdsFromSources(args: string[], env: Record<string, string>) {
  const child = spawn(node24, ['--import', 'tsx', 'bin/dev.js', ...args], {
    cwd: repoRoot,
    env: cliEnv({ ...env, GDS_DEBUG: '1', NO_COLOR: '1' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const result = collect(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer | string) => (stderr += String(chunk)));
  const said = (text: string | RegExp) =>
    new Promise<string>((resolve, reject) => {
      const check = () => {
        if (typeof text === 'string' && stderr.includes(text)) resolve(text);
        const match = typeof text === 'string' ? null : text.exec(stderr);
        if (match !== null) resolve(match[1] ?? match[0]);
      };
      child.stderr.on('data', check);
      check();
      void result.then((r) =>
        reject(new Error(`gds ended (${r.code}) before saying "${String(text)}":\n${r.stderr}`)),
      );
    });
  /** `promise`, or a rejection should gds end first (a request it never sent, say). */
  const before = <T>(promise: Promise<T>, what: string) =>
    Promise.race([
      promise,
      result.then((r) => Promise.reject(new Error(`gds ended (${r.code}) before ${what}:\n${r.stderr}`))),
    ]);
  return { child, result, said, before };
}
