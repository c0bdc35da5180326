// `npm run build:tests` (`npm test` runs it beside lint and type-check): dist/ without checking types again,
// then the installed package the tests start as gds (.gds-tmp/package, the npm package's bundle: ensureBuilt
// of test/cli/helpers/cli-process.ts), so that no test file waits on building it.
import { ensureBuilt } from '../test/cli/helpers/cli-process.js';

const started = performance.now();
await ensureBuilt();
process.stderr.write(
  `build:tests: .gds-tmp/package in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
);
