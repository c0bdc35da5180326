// In a pseudo-terminal (`script`) against a real server: tables keep the ids a person
// copies whole at 60 and 100 columns, times read `… ago`, states are coloured, `-L` says Showing N of M.
// Piped (gds in the test process), the same commands print tab-separated rows with ISO times and nothing cut.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliResult } from '../cli/helpers/cli-process.js';
import { cliCommand, ensureBuilt, runInTerminal } from '../cli/helpers/cli-process.js';
import { runInProcess } from '../helpers/run-in-process.js';
import type { TestServer } from '../helpers/server.js';
import { startTestServer } from './test-server.js';

let server: TestServer;

beforeAll(async () => {
  [server] = await Promise.all([startTestServer(), ensureBuilt()]);
});

afterAll(async () => {
  await server?.close();
});

const env = () => ({
  SERVICE_API_URL: server.url,
  SERVICE_TOKEN: server.user('OWNER').cliToken,
  GDS_CONFIG_DIR: '/nonexistent/gds',
});

async function onTerminal(
  args: string[],
  columns: number,
  extra: Record<string, string> = {},
): Promise<string[]> {
  const [command, argv] = cliCommand(args);
  const line = `stty cols ${columns} rows 40; ${[command, ...argv].map((a) => `'${a}'`).join(' ')}`;
  const { result } = runInTerminal(line, { ...env(), ...extra });
  const r: CliResult = await result;
  expect(r.code, r.stdout).toBe(0);
  return r.stdout.split(/\r?\n/).filter((l) => l !== '');
}

/** The ids `gds list --json` prints: what the table must show. */
async function listedIds(): Promise<string[]> {
  const r = await runInProcess(['list', '--json'], { env: env() });
  const ids = r.stdout
    .trimEnd()
    .split('\n')
    .map((line) => (JSON.parse(line) as { id: string }).id);
  expect(ids.length).toBeGreaterThan(1);
  return ids;
}

const strip = (line: string) => line.replaceAll(/\u001b\[[0-9;?]*[A-Za-z]/g, '');

describe('tables on a terminal', () => {
  it.each([60, 100])(
    'gds list at %i columns: every table id whole, every line within the width',
    async (columns) => {
      const lines = await onTerminal(['list'], columns, { NO_COLOR: '1' });
      const ids = await listedIds();
      for (const line of lines) expect(strip(line).length).toBeLessThanOrEqual(columns);
      for (const id of ids) expect(lines.some((line) => line.includes(id))).toBe(true);
    },
  );

  it('gds audit list at 100 columns: table ids whole, times relative', async () => {
    const lines = (await onTerminal(['audit', 'list', '--limit', '5'], 100, { NO_COLOR: '1' })).map(strip);
    expect(lines[0]).toMatch(/^TIME\s+ACTION/);
    const rows = lines.slice(1).filter((l) => !l.startsWith('Showing'));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row).toMatch(/^(now|\d+[smhdy] ago|\d+mo ago)\s/);
      expect(row).not.toMatch(/\d{4}-\d\d-\d\dT/);
      expect(row).not.toMatch(/tbl_\w*…/);
    }
  });

  it('gds audit list --all: one header, then every page in its columns', async () => {
    const lines = (await onTerminal(['audit', 'list', '--all'], 100, { NO_COLOR: '1' })).map(strip);
    expect(lines[0]).toMatch(/^TIME\s+ACTION/);
    expect(lines.filter((l) => /^TIME\s+ACTION/.test(l))).toHaveLength(1);
    const all = await runInProcess(['audit', 'list', '--all', '--json'], { env: env() });
    expect(lines.length - 1).toBe(all.stdout.trimEnd().split('\n').length);
  });

  it('gds audit list at 80 columns keeps USER, who did it, whole', async () => {
    const lines = (await onTerminal(['audit', 'list', '--limit', '5'], 80, { NO_COLOR: '1' })).map(strip);
    expect(lines[0]).toMatch(/\bUSER\b/);
    const rows = lines.slice(1).filter((l) => !l.startsWith('Showing'));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) expect(row).toMatch(/\b\w+@example\.com\b/);
  });

  it('gds recertification list at 80 columns keeps CAUSE and the whole table id; RESOLVED BY, empty, goes first', async () => {
    const customers = server.table('customers').id;
    await server.sql(`UPDATE gds.tables SET state = 'CERTIFIED' WHERE id = $1`, [customers]);
    const applied = await server.request('PUT', `/api/tables/${customers}/gate1`, {
      token: server.user('OWNER').cliToken,
      body: {
        content: 'customPredicates:\n  - name: r1\n    sql: id IS NOT NULL\n    severity: HARD_FAIL\n',
      },
    });
    expect(applied.status).toBe(200);
    const lines = (await onTerminal(['recertification', 'list'], 80, { NO_COLOR: '1' })).map(strip);
    expect(lines[0]).toMatch(/\bCAUSE\b/);
    expect(lines[0]).not.toContain('RESOLVED BY');
    const row = lines.find((l) => l.includes(customers));
    expect(row, lines.join('\n')).toBeDefined();
    expect(row).toMatch(/\bcustomers\b/);
    expect(row).toMatch(/\bmanual\b/);
  });

  it('states are coloured; -L says Showing N of M', async () => {
    const lines = await onTerminal(['list', '-L', '1'], 120, { FORCE_COLOR: '1' });
    expect(strip(lines[0] ?? '')).toBe(`Showing 1 of ${(await listedIds()).length} tables`);
    expect(lines.join('\n')).toMatch(/\u001b\[3[123]m(CERTIFIED|QUARANTINED|PENDING_REVIEW|DRAFT)/);
  });

  it('piped: tab-separated, ISO times, no header, nothing cut', async () => {
    const r = await runInProcess(['audit', 'list', '--limit', '3'], { env: env() });
    expect(r.code).toBe(0);
    const rows = r.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(row.split('\t')[0]).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z$/);
    const list = await runInProcess(['list', '-L', '1'], { env: env() });
    expect(list.stdout).not.toContain('Showing');
    expect(list.stdout.trimEnd().split('\n')).toHaveLength(1);
  });
});

describe('detail views on a terminal', () => {
  it('gds status says when the table was certified as lists do (… ago); --json keeps the ISO time', async () => {
    const lines = (await onTerminal(['status', 'customers'], 100, { NO_COLOR: '1' })).map(strip);
    const certified = lines.find((l) => l.startsWith('Certified:'));
    expect(certified, lines.join('\n')).toMatch(/^Certified: +v\d+ (now|\d+(s|m|h|d|mo|y) ago)( by \S+)?$/);
    const json = await runInProcess(['status', 'customers', '--json'], { env: env() });
    const status = JSON.parse(json.stdout) as { certification: { certifiedAt: string } };
    expect(status.certification.certifiedAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    const piped = await runInProcess(['status', 'customers'], { env: env() });
    expect(piped.stdout).toMatch(/^Certified: +v\d+ at \d{4}-\d\d-\d\dT/m);
  });
});

describe('--json on a terminal', () => {
  it('is indented and coloured, as gds api prints it; each object parses once the colour is taken off', async () => {
    const lines = await onTerminal(['list', '--json'], 100, { FORCE_COLOR: '1' });
    const screen = lines.join('\n');
    expect(screen).toMatch(/\u001b\[[0-9;]*m"id"/);
    const objects = strip(screen)
      .split(/^}$/m)
      .filter((part) => part.trim() !== '')
      .map((part) => JSON.parse(`${part}}`) as { id: string });
    expect(objects.map((o) => o.id).sort()).toEqual((await listedIds()).sort());
    expect(strip(lines[1] ?? '')).toMatch(/^ {2}"id": "tbl_\w+",$/);
  });
});

// Waits that may pass a second show a spinner (ora) on a terminal's stderr, as push, status and records do;
// piped or under --json nothing of it is written.
describe('progress on a terminal', () => {
  it('gds gate run says what it waits for on the terminal before the proof, and clears it', async () => {
    const screen = (await onTerminal(['gate', 'run', 'orders'], 80, { NO_COLOR: '1' })).join('\n');
    const waiting = screen.indexOf('Running Gate 1 on orders');
    expect(waiting, screen).toBeGreaterThanOrEqual(0);
    expect(waiting).toBeLessThan(screen.indexOf('CHECK'));
    // ora's frame; the line is cleared once the answer is there
    expect(screen).toMatch(/[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] Running Gate 1 on orders/);
    expect(screen.slice(screen.indexOf('CHECK'))).not.toContain('Running Gate 1');
    // the reply names the table as it was given
    expect(screen).toMatch(/Gate 1 (PASSED|FAILED.*) on orders: /);
  });

  it('gds recertify says what it waits for before the outcomes', async () => {
    const screen = (
      await onTerminal(['recertify', '--tables', 'customers', '--env', 'dev'], 100, { NO_COLOR: '1' })
    ).join('\n');
    const waiting = screen.indexOf('Asking the service to recertify');
    expect(waiting, screen).toBeGreaterThanOrEqual(0);
    expect(waiting).toBeLessThan(screen.indexOf('OUTCOME'));
  });

  it('gds gate run --json on a terminal, or piped, writes no progress at all', async () => {
    const screen = await onTerminal(['gate', 'run', 'orders', '--json'], 80, { NO_COLOR: '1' });
    expect(screen.join('\n')).not.toContain('Running Gate 1');
    const r = await runInProcess(['gate', 'run', 'orders'], { env: env() });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('Running Gate 1');
    expect(r.stdout).toContain('record_count\t');
  });
});
