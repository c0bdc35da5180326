// The bundle of the command lines gds runs without oclif (src/cli/direct.ts, command-route.ts directRun), in
// the single executable and in the npm package: boot.ts and bin/run.js pick it for `gate validate -f FILE
// [--json]`. What main() does before such a run, and the run; none of oclif is in this bundle.
import { globalFlagsAfterCommand } from '../../src/cli/command-route.js';
import { ranDirectly } from '../../src/cli/direct.js';
import { redactStandardError, scrubProcessTitle } from '../../src/cli/secrets.js';
import { recordLoadedModules } from './loaded-modules.js';

recordLoadedModules();
scrubProcessTitle();
const argv = globalFlagsAfterCommand(process.argv.slice(2));
redactStandardError(argv);
void ranDirectly(argv).then((ran) => {
  if (!ran) throw new Error(`gds: \`${argv.join(' ')}\` is not a command line the direct bundle runs`);
});
