// The sign-in address comes from the server: the browser is opened only for https, or http on loopback.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openableInBrowser, openBrowser, openPage } from '../../src/cli/browser.js';

const childProcess = process.getBuiltinModule('node:child_process');

afterEach(() => {
  vi.restoreAllMocks();
});

function spawnSpy() {
  return vi
    .spyOn(childProcess, 'spawn')
    .mockImplementation(() => ({ on: () => undefined, unref: () => undefined }) as never);
}

const refused = [
  'file:///etc/passwd',
  'javascript:alert(1)',
  'smb://attacker.example/share',
  'http://auth.example.com/device?code=ABCD',
  'http://10.0.0.1/device',
  '--help',
  '',
];
const allowed = [
  'https://auth.example.com/device?user_code=ABCD-EFGH',
  'http://127.0.0.1:8787/device',
  'http://localhost/device',
  'http://[::1]:9/device',
];

describe('openBrowser', () => {
  it.each(refused)('does not open %j', (uri) => {
    const spawn = spawnSpy();
    expect(openableInBrowser(uri)).toBe(false);
    openBrowser(uri);
    expect(spawn).not.toHaveBeenCalled();
  });

  it.each(allowed)('opens %j', (uri) => {
    const spawn = spawnSpy();
    expect(openableInBrowser(uri)).toBe(true);
    openBrowser(uri);
    expect(spawn).toHaveBeenCalledTimes(1);
    expect(spawn.mock.calls[0]?.[1]).toContain(uri);
  });
});

describe('openPage (--web)', () => {
  const desktop = { DISPLAY: process.env.DISPLAY, WAYLAND_DISPLAY: process.env.WAYLAND_DISPLAY };
  afterEach(() => {
    for (const [name, value] of Object.entries(desktop)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  });

  it.runIf(process.platform === 'linux')(
    'opens nothing without a display; the caller prints the address',
    () => {
      delete process.env.DISPLAY;
      delete process.env.WAYLAND_DISPLAY;
      const spawn = spawnSpy();
      expect(openPage('http://127.0.0.1:8787/dashboard/tables/tbl_1')).toBe(false);
      expect(spawn).not.toHaveBeenCalled();
    },
  );

  it.runIf(process.platform === 'linux')('with a display opens only what openBrowser would', () => {
    process.env.DISPLAY = ':99';
    const spawn = spawnSpy();
    expect(openPage('http://10.0.0.1/dashboard/tables/tbl_1')).toBe(false);
    expect(spawn).not.toHaveBeenCalled();
    expect(openPage('http://127.0.0.1:8787/dashboard/tables/tbl_1')).toBe(true);
    expect(spawn.mock.calls[0]?.[1]).toEqual(['http://127.0.0.1:8787/dashboard/tables/tbl_1']);
  });
});

describe('GDS_BROWSER and BROWSER', () => {
  it('GDS_BROWSER, else BROWSER, names the program; its words stay, the address comes last', async () => {
    const { openerFor } = await import('../../src/cli/browser.js');
    const uri = 'https://gds.example.com/device';
    expect(openerFor(uri, { GDS_BROWSER: 'firefox --new-window', BROWSER: 'chromium' })).toEqual([
      'firefox',
      ['--new-window', uri],
    ]);
    expect(openerFor(uri, { BROWSER: 'wslview' })).toEqual(['wslview', [uri]]);
  });

  it('false, 0 or none: no browser at all, not even on a desktop', async () => {
    const { chosenBrowser, hasDesktop } = await import('../../src/cli/browser.js');
    for (const value of ['false', '0', 'none']) {
      expect(chosenBrowser({ GDS_BROWSER: value })).toBe(false);
      expect(hasDesktop({ GDS_BROWSER: value, DISPLAY: ':0' })).toBe(false);
    }
  });

  it('WSL (WSL_DISTRO_NAME): a desktop without DISPLAY, opened through Windows', async () => {
    const { hasDesktop, openerFor } = await import('../../src/cli/browser.js');
    if (process.platform !== 'linux') return;
    expect(hasDesktop({ WSL_DISTRO_NAME: 'Ubuntu' })).toBe(true);
    expect(openerFor('https://x.example', { WSL_DISTRO_NAME: 'Ubuntu' })).toEqual([
      'rundll32.exe',
      ['url.dll,FileProtocolHandler', 'https://x.example'],
    ]);
  });
});
