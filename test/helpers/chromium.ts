// The Chromium the browser tests drive (Debian's package, never a download): its path, or why there is
// none. `.ci/run` installs it; elsewhere those tests skip with SKIP_NO_CHROMIUM as the reason.
import { accessSync, constants } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { chromium } from 'playwright-core';

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

export interface Browser {
  /** The profile folder (removed by close); a test may keep its own files there. */
  profile: string;
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/** Headless Chromium at `path` on a fresh profile folder, with its first page. */
export async function launchBrowser(path: string): Promise<Browser> {
  const profile = await mkdtemp(join(tmpdir(), 'gds-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: path,
    headless: true,
    args: CHROMIUM_ARGS,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    profile,
    context,
    page,
    close: async () => {
      await context.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}
