// The folder gds keeps its files in: GDS_CONFIG_DIR, else $XDG_CONFIG_HOME/gds (when absolute), else
// ~/.config/gds. Apart from config.ts (credentials, written under a lock) because settings.ts reads
// settings.json at every start-up (colour, prompts), and start-up must not load the credentials layer.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';

export function configDir(env: NodeJS.ProcessEnv = process.env): string {
  if (env.GDS_CONFIG_DIR) return env.GDS_CONFIG_DIR;
  const xdg = env.XDG_CONFIG_HOME;
  return join(xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config'), 'gds');
}
