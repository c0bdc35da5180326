// `npm run build:package-bundles` (prepack runs it after tsc and `oclif manifest`): the npm package's command
// bundles in dist/bundle (buildPackageBundles in build-binary.ts); postpack removes them, so that a checkout
// never runs bundles older than its sources. Options: --no-minify.
import { relative } from 'node:path';
import { buildPackageBundles, packageBundleDir, root } from './build-binary.js';

const started = performance.now();
const own = await buildPackageBundles(packageBundleDir, { minify: !process.argv.includes('--no-minify') });
const seconds = ((performance.now() - started) / 1000).toFixed(1);
process.stderr.write(
  `build:package-bundles: ${relative(root, packageBundleDir)}: ${own.join(', ')} in ${seconds} s\n`,
);
