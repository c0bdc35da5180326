// Imported first by boot.ts, so that it runs before any other module of the executable: a token given as an
// argument is masked in the process's command line (`ps`, /proc/PID/cmdline) at once.
import { scrubProcessTitle } from '../../src/cli/process-title.js';

scrubProcessTitle();
