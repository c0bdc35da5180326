// `gds --version` answers before oclif loads (most of the start-up time goes there); the single
// executable's boot script answers it before the bundle is even compiled. Same line as oclif's.
import { arch, platform, release } from 'node:os';

export interface NameAndVersion {
  name: string;
  version: string;
}

/** oclif's `config.userAgent`: `gds/0.1.0 linux-x64 node-v24.21.0`. */
export function userAgent(pjson: NameAndVersion): string {
  const os = platform() === 'linux' && release().toLowerCase().includes('microsoft') ? 'wsl' : platform();
  const cpu = arch() === 'ia32' ? 'x86' : arch();
  return `${pjson.name}/${pjson.version} ${os}-${cpu} node-${process.version}`;
}

/** Prints the version line when `--version` (or `version`, as gh has it) is the only argument; any other
 *  argument takes oclif's path. */
export function answeredVersion(argv: readonly string[], pjson: NameAndVersion): boolean {
  if (argv.length !== 1 || (argv[0] !== '--version' && argv[0] !== 'version')) return false;
  process.stdout.write(`${userAgent(pjson)}\n`);
  return true;
}
