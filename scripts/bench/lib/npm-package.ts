// The npm package as a user gets it, for the benches that run it: `npm pack` (prepack adds the oclif manifest
// and the bundle, scripts/build-package-bundles.ts), unpacked, with the checkout's node_modules
// beside it for its dependencies.
import { spawn } from 'node:child_process';
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));

/** The packed package unpacked into `scratch`: its folder (holding bin/run.js). */
export async function unpackedPackage(scratch: string): Promise<string> {
  const packed = await output('npm', ['pack', '--silent', '--pack-destination', scratch]);
  await output('tar', ['-xzf', join(scratch, packed.trim().split('\n').pop() ?? ''), '-C', scratch]);
  const dir = join(scratch, 'package');
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}

/** Runs a command to its end and answers its stdout; its stderr is shown only when it fails. */
export function output(command: string, args: string[], env?: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(out)
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}\n${err.trim()}`)),
    );
  });
}
