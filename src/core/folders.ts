// The folders gds keeps its files in, after the XDG base directory spec: config in GDS_CONFIG_DIR, else
// $XDG_CONFIG_HOME/gds, else ~/.config/gds; state (import and recertify resume files, the update check)
// in $XDG_STATE_HOME/gds, else ~/.local/state/gds; caches in $XDG_CACHE_HOME/gds, else ~/.cache/gds.
// A relative XDG_* path is invalid by the spec and ignored. Apart from config.ts (credentials, written under
// a lock) because settings.ts reads settings.json at every start-up (colour, prompts), and start-up must not
// load the credentials layer.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

function xdgBase(value: string | undefined, fallback: readonly string[]): string {
  return value && isAbsolute(value) ? value : join(homedir(), ...fallback);
}

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GDS_CONFIG_DIR) return env.GDS_CONFIG_DIR;
  return join(xdgBase(env.XDG_CONFIG_HOME, ['.config']), 'gds');
}

export function stateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(xdgBase(env.XDG_STATE_HOME, ['.local', 'state']), 'gds');
}

export function cacheDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(xdgBase(env.XDG_CACHE_HOME, ['.cache']), 'gds');
}
