// Opening the user's browser: sign-in on a desktop terminal, and `--web` (a table's dashboard page).
import { settingValue } from './settings.js';
import { isInsecureUrl } from '../core/url-policy.js';

const off = new Set(['0', 'false', 'no', 'none', 'off']);

/** GDS_BROWSER, else the `browser` setting, else BROWSER (gh's order): the command that opens an address
 *  (`firefox`, `wslview`, `echo`), or false/0/none for no browser at all. Undefined: the platform's opener. */
export function chosenBrowser(env: NodeJS.ProcessEnv = process.env): string | false | undefined {
  const value = (env.GDS_BROWSER || settingValue('browser', env) || env.BROWSER || '').trim();
  if (value === '') return undefined;
  return off.has(value.toLowerCase()) ? false : value;
}

/** Windows Subsystem for Linux: no DISPLAY needed, Windows opens the page. */
export function isWsl(env: NodeJS.ProcessEnv = process.env): boolean {
  if (process.platform !== 'linux') return false;
  if (env.WSL_DISTRO_NAME || env.WSL_INTEROP) return true;
  try {
    const { readFileSync } = process.getBuiltinModule('node:fs');
    return /microsoft/i.test(readFileSync('/proc/sys/kernel/osrelease', 'utf8'));
  } catch {
    return false;
  }
}

export function hasDesktop(env: NodeJS.ProcessEnv = process.env): boolean {
  const chosen = chosenBrowser(env);
  if (chosen === false) return false;
  if (chosen !== undefined) return true;
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(env.DISPLAY || env.WAYLAND_DISPLAY) || isWsl(env);
}

/** The program and its arguments that open `uri`. */
export function openerFor(uri: string, env: NodeJS.ProcessEnv = process.env): [string, string[]] {
  const chosen = chosenBrowser(env);
  if (typeof chosen === 'string') {
    const [program = chosen, ...rest] = chosen.split(/\s+/);
    return [program, [...rest, uri]];
  }
  if (process.platform === 'darwin') return ['open', [uri]];
  if (process.platform === 'win32') return ['rundll32', ['url.dll,FileProtocolHandler', uri]];
  if (isWsl(env)) return ['rundll32.exe', ['url.dll,FileProtocolHandler', uri]];
  return ['xdg-open', [uri]];
}

/** Only https, or http on loopback: the address comes from the server, and an opener would as gladly
 *  run a file:, javascript: or custom-scheme address. */
export function openableInBrowser(uri: string): boolean {
  const url = URL.parse(uri);
  if (url === null) return false;
  return url.protocol === 'https:' || (url.protocol === 'http:' && !isInsecureUrl(url));
}

/** Best effort: no opener, one that fails, or an address it may not open leaves the printed address as
 *  the way in. */
export function openBrowser(uri: string): void {
  if (!openableInBrowser(uri)) return;
  // getBuiltinModule, not import(): a dynamic import() has no loader inside the single executable,
  // and a static import would load child_process at every start-up.
  const { spawn } = process.getBuiltinModule('node:child_process');
  const [command, args] = openerFor(uri);
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => undefined);
    child.unref();
  } catch {
    // no opener: the address is on stderr already
  }
}

/** `--web`: opens the page when there is a desktop and the address may be opened; false leaves printing
 *  the address to the caller (no display, a remote shell, or an address the rules above refuse). */
export function openPage(uri: string): boolean {
  if (!hasDesktop() || !openableInBrowser(uri)) return false;
  openBrowser(uri);
  return true;
}
