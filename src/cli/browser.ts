// Opening the user's browser, for sign-in on a desktop terminal.

export function hasDesktop(): boolean {
  if (process.platform === 'darwin' || process.platform === 'win32') return true;
  return Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
}

/** Best effort: no opener, or one that fails, leaves the printed address as the way in. */
export function openBrowser(uri: string): void {
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
