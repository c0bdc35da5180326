// The single executable's main script (Node's SEA `main`): answers a bare `--version` at once, else
// compiles the bundle (SEA asset gds.cjs) with the code cache trained at build time (asset gds.cache)
// and runs it. Assets are read in place from the executable: no copy of the cache, one of the source.
import { getRawAsset } from 'node:sea';
import packageJson from '../../package.json' with { type: 'json' };
import { answeredVersion } from '../../src/cli/version.js';
import { compileBundle } from './bundle-script.js';
import type { BundleFunction } from './bundle-script.js';

if (!answeredVersion(process.argv.slice(2), packageJson)) {
  const source = Buffer.from(getRawAsset('gds.cjs')).toString('latin1');
  const script = compileBundle(source, new Uint8Array(getRawAsset('gds.cache')));
  if (process.env.GDS_TEST_CODE_CACHE === '1') {
    process.stderr.write(`code cache: ${script.cachedDataRejected === true ? 'rejected' : 'accepted'}\n`);
  }
  (script.runInThisContext() as BundleFunction)(exports, require, module, __filename, __dirname);
}
