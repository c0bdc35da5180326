// yaml (32 ms of CPU and 12 MiB to load), loaded here only, on first use: the modules built on it take it
// as a parameter, so the commands that read no YAML never load it.
import type * as YamlLibrary from 'yaml';
import { onFirstUse } from '../on-first-use.js';

export type Yaml = typeof YamlLibrary;

export const loadYaml: () => Promise<Yaml> = onFirstUse(() => import('yaml'));
