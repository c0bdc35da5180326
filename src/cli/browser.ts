// Opening the user's browser: sign-in on a desktop terminal, and `--web` (a table's dashboard page).
import { isInsecureUrl } from '../core/url-policy.js';

export function hasDesktop(): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
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
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [uri]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', uri]]
        : ['xdg-open', [uri]];
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
