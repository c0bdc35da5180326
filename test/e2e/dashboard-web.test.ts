// `gds status <id> --web` and `gds push … --web`, gds run in the test process: the table's dashboard page is
// opened where there is a display (a stand-in xdg-open on the PATH records what it was given), and its address
// printed where there is none or under --json. The address is the dashboard page the server serves.
import { chmod, mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;
let dir: string;
let opened: string;
let runs = 0;

beforeAll(async () => {
  server = await startTestServer();
  dir = await mkdtemp(join(tmpdir(), 'gds-web-'));
  const bin = join(dir, 'bin');
  await mkdir(bin);
  await writeFile(join(bin, 'xdg-open'), '#!/bin/sh\nprintf "%s\\n" "$@" >> "$GDS_TEST_OPENED"\n');
  await chmod(join(bin, 'xdg-open'), 0o755);
  opened = join(dir, 'opened.txt');
});

afterAll(async () => {
  await server?.close();
});

/** Runs gds as the OWNER; `display` gives it a desktop (and the stand-in opener), else none. */
async function gds(args: string[], display: boolean): Promise<CliResult> {
  runs += 1;
  return runInProcess(args, {
    env: {
      GDS_CONFIG_DIR: join(dir, `c${runs}`),
      GDS_SECRET_STORAGE: 'file',
      SERVICE_API_URL: server.url,
      SERVICE_TOKEN: server.user('OWNER').cliToken,
      GDS_TEST_OPENED: opened,
      PATH: `${join(dir, 'bin')}:${process.env.PATH ?? ''}`,
      DISPLAY: display ? ':99' : undefined,
      WAYLAND_DISPLAY: undefined,
    },
  });
}

/** What the stand-in opener was given; it runs detached, so it may finish after gds has exited. */
async function openedAddresses(expected: number): Promise<string[]> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const lines = (await readFile(opened, 'utf8').catch(() => '')).split('\n').filter(Boolean);
    if (lines.length >= expected) return lines;
    await sleep(50);
  }
  return (await readFile(opened, 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

describe('gds status --web', () => {
  it('without a display prints the page address on stdout, and that page is the table', async () => {
    const orders = server.table('orders').id;
    const result = await gds(['status', orders, '--web'], false);
    expect(result.code, result.stderr).toBe(0);
    const url = `${server.origin}/dashboard/tables/${orders}`;
    expect(result.stdout).toBe(`${url}\n`);
    const page = await fetch(url, { headers: { authorization: `Bearer ${server.user('OWNER').cliToken}` } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain(orders);
    expect(await openedAddresses(0)).toEqual([]);
  });

  it('under --json prints one line {tableId, url} and opens nothing', async () => {
    const orders = server.table('orders').id;
    const result = await gds(['status', orders, '--web', '--json'], true);
    expect(result.code, result.stderr).toBe(0);
    expect(
      result.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as unknown),
    ).toEqual([{ tableId: orders, url: `${server.origin}/dashboard/tables/${orders}` }]);
    expect(await openedAddresses(0)).toEqual([]);
  });

  it('with a display opens the page and says so on stderr; an unknown table fails first, opening nothing', async () => {
    const customers = server.table('customers').id;
    const result = await gds(['status', customers, '--web'], true);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    const url = `${server.origin}/dashboard/tables/${customers}`;
    expect(result.stderr).toContain(`Opened ${url} in your browser.`);
    expect(await openedAddresses(1)).toEqual([url]);

    const unknown = await gds(['status', 'tbl_nope', '--web'], true);
    expect(unknown.code).not.toBe(0);
    expect(unknown.stderr).toContain('tbl_nope');
    expect(await openedAddresses(1)).toEqual([url]);
  });
});

describe('gds push --web', () => {
  const artifact = (name: string) =>
    `table: ${name}\nsource: analytics_dev.products\ncolumns:\n  - { name: id, type: text }\n  - { name: price, type: numeric }\n`;

  it('opens the tracking URL with a display, prints it without; under --json one record, nothing opened', async () => {
    const before = (await openedAddresses(0)).length;
    const connector = server.ready.connectors.find((c) => c.environmentLabel === 'dev')?.id ?? '';
    await writeFile(join(dir, 'web_a.yml'), artifact('web_a'));
    const shown = await gds(['push', join(dir, 'web_a.yml'), '--connector', connector, '--web'], true);
    expect(shown.code, shown.stderr).toBe(0);
    const tracking = /Tracking: (\S+)/.exec(shown.stdout)?.[1] ?? '';
    expect(tracking).toMatch(new RegExp(`^${server.origin}/dashboard/tables/tbl_`));
    expect(shown.stderr).toContain(`Opened ${tracking} in your browser.`);
    expect((await openedAddresses(before + 1)).slice(before)).toEqual([tracking]);

    // The same artifact again with --replace: nothing changes, and the answer still names the page to open.
    const replace = ['--replace', /Registered (\S+)/.exec(shown.stdout)?.[1] ?? ''];
    const json = await gds(
      ['push', join(dir, 'web_a.yml'), '--connector', connector, ...replace, '--web', '--json'],
      true,
    );
    expect(json.code, json.stderr).toBe(0);
    const records = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { trackingUrl: string });
    expect(records).toHaveLength(1);
    expect(records[0]?.trackingUrl).toBe(tracking);

    const headless = await gds(
      ['push', join(dir, 'web_a.yml'), '--connector', connector, ...replace, '--web'],
      false,
    );
    expect(headless.code, headless.stderr).toBe(0);
    expect(headless.stdout).toContain(`Tracking: ${tracking}`);
    expect(headless.stderr).not.toContain('Opened');
    expect(await openedAddresses(before + 1)).toHaveLength(before + 1);
  });
});
