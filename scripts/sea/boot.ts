// The single executable's main script (Node's SEA `main`): answers a bare `--version` at once, and a help
// page rendered at build time when it applies (precomputed-help.ts), else compiles the bundle (SEA asset
// gds.cjs) with a code cache trained at build time (asset gds.cache, or gds-help.cache for help) and runs
// it. Assets are read in place from the executable: no copy of the cache, one of the source.
import { getRawAsset } from 'node:sea';
import packageJson from '../../package.json' with { type: 'json' };
import { answeredVersion, userAgent } from '../../src/cli/version.js';
import { codeCacheAsset, compileBundle } from './bundle-script.js';
import type { BundleFunction } from './bundle-script.js';
import { helpKey, precomputedHelpApplies } from './precomputed-help.js';
import type { PrecomputedHelp } from './precomputed-help.js';

function answeredHelp(argv: string[]): boolean {
  if (!precomputedHelpApplies(argv, process.env)) return false;
  const help = JSON.parse(Buffer.from(getRawAsset('help.json')).toString('utf8')) as PrecomputedHelp;
  const page = help.pages[helpKey(argv)];
  // The root page's VERSION line names the platform (WSL reads as `wsl`): only the build's is served.
  if (page === undefined || help.userAgent !== userAgent(packageJson)) return false;
  process.stdout.write(page);
  return true;
}

const argv = process.argv.slice(2);
if (!answeredVersion(argv, packageJson) && !answeredHelp(argv)) {
  const source = Buffer.from(getRawAsset('gds.cjs')).toString('latin1');
  const script = compileBundle(source, new Uint8Array(getRawAsset(codeCacheAsset(argv))));
  if (process.env.GDS_TEST_CODE_CACHE === '1') {
    process.stderr.write(`code cache: ${script.cachedDataRejected === true ? 'rejected' : 'accepted'}\n`);
  }
  (script.runInThisContext() as BundleFunction)(exports, require, module, __filename, __dirname);
}
