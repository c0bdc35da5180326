// The Chromium the browser tests drive (Debian's package, never a download): its path, or why there is
// none. `.ci/run` installs it; elsewhere those tests skip with SKIP_NO_CHROMIUM as the reason.
import { accessSync, constants } from 'node:fs';

export const SKIP_NO_CHROMIUM = 'no Chromium (apt-get install chromium)';

/** GDS_TEST_CHROMIUM, else Debian's /usr/bin/chromium. */
export function chromiumPath(): { path: string } | { skip: string } {
  const path = process.env.GDS_TEST_CHROMIUM ?? '/usr/bin/chromium';
  try {
    accessSync(path, constants.X_OK);
    return { path };
  } catch {
    return { skip: SKIP_NO_CHROMIUM };
  }
}

/** Headless, sandbox-free (containers), and quiet: no network of its own, no first-run pages. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
