// yaml itself (32 ms of CPU and 12 MiB to load), for a YAML file read whole (gds.yml, an alias file).
import { onFirstUse } from '../../core/on-first-use.js';

export const yamlLibrary = onFirstUse(() => import('yaml'));
