// The npm package as a user gets it, for the benches that run it: `npm pack` (prepack adds the oclif manifest
// and the bundle, scripts/build-package-bundles.ts), unpacked, with the checkout's node_modules
// beside it for its dependencies.
import { symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { execText, root } from '../../bundle/tools.js';

/** The packed package unpacked into `scratch`: its folder (holding bin/run.js). */
export async function unpackedPackage(scratch: string): Promise<string> {
  const packed = await execText('npm', ['pack', '--silent', '--pack-destination', scratch]);
  await execText('tar', ['-xzf', join(scratch, packed.trim().split('\n').pop() ?? ''), '-C', scratch]);
  const dir = join(scratch, 'package');
  await symlink(join(root, 'node_modules'), join(dir, 'node_modules'));
  return dir;
}
