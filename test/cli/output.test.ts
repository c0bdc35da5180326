import { describe, expect, it } from 'vitest';
import { CliError, ExitCode } from '../../src/core/errors.js';
import { lines } from '../../src/core/terminal-text.js';
import { colorEnabled, forcedTerminal, jsonRequested, Output } from '../../src/cli/output.js';

class Capture {
  text = '';
  constructor(
    readonly isTTY: boolean,
    readonly columns = isTTY ? 80 : undefined,
  ) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
  // What a TTY stream offers ora; positions do not matter here, the text does.
  cursorTo(): boolean {
    return true;
  }
  moveCursor(): boolean {
    return true;
  }
  clearLine(): boolean {
    return true;
  }
  get lines(): string[] {
    return this.text.split('\n').slice(0, -1);
  }
}

function output(
  options: {
    json?: boolean;
    tty?: boolean;
    columns?: number;
    stdoutColumns?: number;
    env?: NodeJS.ProcessEnv;
    fields?: string[];
    jq?: string;
  } = {},
) {
  const stdout = new Capture(options.tty ?? false, options.stdoutColumns);
  const stderr = new Capture(options.tty ?? false, options.columns);
  const out = new Output({
    json: options.json ?? false,
    stdout,
    stderr,
    env: options.env ?? {},
    fields: options.fields,
    jq: options.jq,
  });
  return { out, stdout, stderr };
}

const hostile = 'name\u001b]0;owned\u0007\u001b[2J\r\u009b31m';
const ansi = /[\u001b\u009b]/;

describe('Output under --json', () => {
  it('writes one compact, parseable object per line on stdout and nothing human there', async () => {
    const { out, stdout, stderr } = output({ json: true });
    out.record({ id: 't_1', state: 'DRAFT' });
    out.print('a human line');
    await out.table([{ id: 't_2' }, { id: 't_3' }], [{ header: 'ID', value: (r: { id: string }) => r.id }]);
    expect(stdout.lines).toEqual(['{"id":"t_1","state":"DRAFT"}', '{"id":"t_2"}', '{"id":"t_3"}']);
    for (const line of stdout.lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(stderr.text).toBe('');
  });

  it('keeps data lossless but escapes C1 and DEL so no raw control byte reaches a terminal', () => {
    const { out, stdout } = output({ json: true });
    out.record({ name: hostile });
    expect(stdout.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(JSON.parse(stdout.lines[0] ?? '')).toEqual({ name: hostile });
  });

  it('escapes, losslessly, the format characters that reorder or hide what a terminal shows', () => {
    // Bidi overrides, embeddings and isolates (Trojan Source), marks, zero width space, BOM, soft hyphen, and
    // a tag character (outside the BMP); the zero width joiners emoji need stay as they are.
    const reordering =
      'a\u202eb\u202ac\u2066d\u2069e\u200ff\u061cg\u200bh\ufeffi\u00adj\u{e0041}k\u2028l\u2029m';
    const { out, stdout, stderr } = output({ json: true });
    out.record({ name: reordering, emoji: '👩\u200d💻', persian: 'می\u200cخواهم' });
    out.error(new CliError(reordering, { exitCode: ExitCode.Failure }));
    const terminalActs = /[\u00ad\u061c\u200b\u200e\u200f\u2028-\u202e\u2060-\u206f\ufeff]|\u{e0041}/u;
    expect(stdout.text).not.toMatch(terminalActs);
    expect(stderr.text).not.toMatch(terminalActs);
    expect(stdout.text).toContain('\\u202e');
    expect(stdout.text).toContain('👩\u200d💻');
    expect(JSON.parse(stdout.lines[0] ?? '')).toEqual({
      name: reordering,
      emoji: '👩\u200d💻',
      persian: 'می\u200cخواهم',
    });
    expect((JSON.parse(stderr.lines[0] ?? '') as { error: { message: string } }).error.message).toBe(
      reordering,
    );
  });

  it('keeps only the fields named by --json a,b, in that order', async () => {
    const { out, stdout } = output({ fields: ['name', 'id'] });
    out.record({ id: 't_1', name: 'orders', state: 'CERTIFIED' });
    await out.table([{ id: 't_2', name: 'b', state: 'X' }], [{ header: 'ID', value: (r) => r.id }]);
    expect(stdout.lines).toEqual(['{"name":"orders","id":"t_1"}', '{"name":"b","id":"t_2"}']);
  });

  it('refuses an unknown --json field with exit 2, naming the fields there are', () => {
    const { out, stdout } = output({ fields: ['id', 'nme'] });
    let thrown: unknown;
    try {
      out.record({ id: 't_1', name: 'orders' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(CliError);
    expect((thrown as CliError).exitCode).toBe(ExitCode.Usage);
    expect((thrown as CliError).message).toContain('nme');
    expect((thrown as CliError).suggestion).toBe('Available fields: id, name.');
    expect(stdout.text).toBe('');
  });

  it('filters each record through --jq, strings raw and other values as compact JSON, in order', async () => {
    const { out, stdout } = output({ jq: 'select(.n > 1) | .name, {n}' });
    out.record({ name: 'a', n: 1 });
    out.record({ name: 'b\u001b[2J', n: 2 });
    out.record({ name: 'c', n: 3 });
    await out.flush();
    expect(stdout.lines).toEqual(['b\u001b[2J', '{"n":2}', 'c', '{"n":3}']);
    const terminal = output({ jq: 'select(.n > 1) | .name, {n}', tty: true });
    terminal.out.record({ name: 'b\u001b[2J', n: 2 });
    await terminal.out.flush();
    expect(terminal.stdout.lines).toEqual(['b', '{"n":2}']);
  });

  it('renders an error as exactly one {"error":{code,message,details}} line on stderr', () => {
    const { out, stdout, stderr } = output({ json: true });
    out.error(new CliError('Table not found', { exitCode: ExitCode.NotFound, details: { id: 't_9' } }));
    expect(stdout.text).toBe('');
    expect(stderr.lines).toHaveLength(1);
    expect(JSON.parse(stderr.lines[0] ?? '')).toEqual({
      error: { code: 'not_found', message: 'Table not found', suggestion: null, details: { id: 't_9' } },
    });
  });

  it('escapes C1 and DEL in an error line and in an error body on stderr, losslessly', () => {
    const { out, stderr } = output({ json: true });
    out.error(
      new CliError(hostile, { exitCode: ExitCode.Failure, code: 'x\u0085', details: { d: hostile } }),
    );
    out.errorRecord({ error: { code: 'y\u009b', message: hostile } });
    expect(stderr.text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(stderr.lines.map((l) => JSON.parse(l) as unknown)).toEqual([
      { error: { code: 'x\u0085', message: hostile, suggestion: null, details: { d: hostile } } },
      { error: { code: 'y\u009b', message: hostile } },
    ]);
  });

  it('cuts values of the details over 500 characters; the line parses, the rest is whole', () => {
    const { out, stderr } = output({ json: true });
    const tables = Array.from({ length: 5_000 }, (_, i) => `table_${i}`).join(',');
    const path = `/work/${'deep/'.repeat(2_000)}rows.csv`;
    out.error(
      new CliError('No table is named so.', {
        exitCode: ExitCode.NotFound,
        suggestion: 'Run gds list.',
        details: { tables, file: path, found: 0, names: ['orders', 'a'.repeat(500), 'b'.repeat(501)] },
      }),
    );
    expect(stderr.lines).toHaveLength(1);
    expect(stderr.text.length).toBeLessThan(2_500);
    expect(JSON.parse(stderr.lines[0] ?? '')).toEqual({
      error: {
        code: 'not_found',
        message: 'No table is named so.',
        suggestion: 'Run gds list.',
        details: {
          tables: `${tables.slice(0, 499)}…`,
          file: `…${path.slice(-499)}`,
          found: 0,
          names: ['orders', 'a'.repeat(500), `${'b'.repeat(499)}…`],
        },
      },
    });
  });

  it('shows no spinner and prints no progress line', async () => {
    const { out, stdout, stderr } = output({ json: true, tty: true });
    const spinner = await out.spinner('waiting');
    spinner.succeed('done');
    expect(stdout.text + stderr.text).toBe('');
  });
});

describe('when: times in detail views', () => {
  it('reads 12m ago or in 59m on a terminal, as tables do; piped, the ISO time', () => {
    const ago = new Date(Date.now() - 12 * 60_000 - 5000).toISOString();
    const ahead = new Date(Date.now() + 59 * 60_000 + 5000).toISOString();
    const terminal = output({ tty: true });
    expect(terminal.out.when(ago)).toBe('12m ago');
    expect(terminal.out.when(ahead)).toBe('in 59m');
    expect(output({ tty: false }).out.when(ago)).toBe(ago);
  });
});

describe('--json on a terminal', () => {
  const value = { id: 'tbl_1', n: 3, ok: true, none: null, tags: ['a'] };

  it('is indented and coloured as gds api prints JSON; NO_COLOR leaves it indented, plain', () => {
    const coloured = output({ json: true, tty: true });
    coloured.out.record(value);
    expect(coloured.stdout.text).toContain('\u001b[');
    const plain = output({ json: true, tty: true, env: { NO_COLOR: '1' } });
    plain.out.record(value);
    expect(plain.stdout.text).toBe(`${JSON.stringify(value, null, 2)}\n`);
    expect(coloured.stdout.text.replaceAll(/\u001b\[[0-9;]*m/g, '')).toBe(plain.stdout.text);
  });

  it('keeps every character on a terminal: C1 and format characters as \\u escapes, as piped', () => {
    const name = 'orders \u202eabc \u009b31m tail';
    for (const env of [{ NO_COLOR: '1' }, {}]) {
      const { out, stdout } = output({ json: true, tty: true, env });
      out.record({ name, [`key\u009d`]: ['x\u200by'] });
      const text = stdout.text.replaceAll(/\u001b\[[0-9;]*m/g, '');
      expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u200b\u202e]/);
      expect(text).toContain('"name": "orders \\u202eabc \\u009b31m tail"');
      expect(JSON.parse(text)).toEqual({ name, [`key\u009d`]: ['x\u200by'] });
    }
  });

  it('keeps --json a,b on a terminal, and stays one compact line per record piped or under GDS_FORCE_TTY', () => {
    const fields = output({ json: true, tty: true, fields: ['id', 'n'], env: { NO_COLOR: '1' } });
    fields.out.record(value);
    expect(fields.stdout.text).toBe('{\n  "id": "tbl_1",\n  "n": 3\n}\n');
    const piped = output({ json: true, tty: false });
    piped.out.record(value);
    expect(piped.stdout.text).toBe(`${JSON.stringify(value)}\n`);
    const capture = new Capture(false);
    const forced = new Output({
      json: true,
      stdout: forcedTerminal(capture, { GDS_FORCE_TTY: '1' }),
      env: { GDS_FORCE_TTY: '1' },
    });
    forced.record(value);
    expect(capture.text).toBe(`${JSON.stringify(value)}\n`);
  });
});

describe('Output for people', () => {
  it('strips control characters from every printed string, table cell, message and error', async () => {
    const { out, stdout, stderr } = output({ tty: true });
    out.print(hostile);
    out.print(out.style('green', hostile));
    await out.table([{ name: hostile }], [{ header: hostile, value: (r: { name: string }) => r.name }]);
    out.info(hostile);
    out.error(new CliError(hostile, { exitCode: ExitCode.Failure, suggestion: hostile }));
    const visible = (stdout.text + stderr.text).replace(/\u001b\[[0-9;]*m/g, '');
    expect(visible).not.toMatch(ansi);
    expect(visible).not.toMatch(/[\r\u0007]/);
    expect(visible).toContain('name');
    expect(visible).not.toContain('owned');
  });

  it('colours on a TTY, and only with our own SGR sequences', () => {
    const { out, stdout } = output({ tty: true });
    out.print(out.style('red', '-removed'), ' rest');
    expect(stdout.text).toBe('\u001b[31m-removed\u001b[39m rest\n');
  });

  it('prints plain text when stdout is not a TTY', () => {
    const { out, stdout } = output({ tty: false });
    out.print(out.style('red', '-removed'));
    expect(stdout.text).toBe('-removed\n');
  });

  it('pipes a table as tab-separated rows: no header, no colour, nothing cut (gh rules)', async () => {
    const { out, stdout, stderr } = output({ tty: false, env: { FORCE_COLOR: '1' } });
    const long = 'x'.repeat(300);
    await out.table(
      [
        { id: 't_1', state: 'DRAFT', note: `a\tb\nc ${long}` },
        { id: 't_2', state: null, note: '' },
      ],
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'STATE', value: (r) => r.state },
        { header: 'NOTE', value: (r) => r.note },
      ],
    );
    expect(stdout.lines).toEqual([`t_1\tDRAFT\ta b c ${long}`, 't_2\t\t']);
    expect(stdout.text).not.toMatch(ansi);
    expect(stderr.text).toBe('');
  });

  it('aligns a table on a terminal under an upper-case header, without borders', async () => {
    const { out, stdout } = output({ tty: true, env: { NO_COLOR: '1' } });
    await out.table(
      [
        { id: 't_1', state: 'DRAFT' },
        { id: 't_22', state: 'CERTIFIED' },
      ],
      [
        { header: 'Id', value: (r) => r.id },
        { header: 'State', value: (r) => r.state },
      ],
    );
    expect(stdout.lines).toEqual(['ID    STATE', 't_1   DRAFT', 't_22  CERTIFIED']);
  });

  it('cuts the widest columns with … so every line fits the terminal', async () => {
    const { out, stdout } = output({ tty: true, stdoutColumns: 40, env: { NO_COLOR: '1' } });
    await out.table(
      [{ id: 'tbl_0123456789abcdef', name: 'a_very_long_table_name_indeed', state: 'OK' }],
      [
        { header: 'ID', value: (r) => r.id },
        { header: 'NAME', value: (r) => r.name },
        { header: 'STATE', value: (r) => r.state },
      ],
    );
    for (const line of stdout.lines) expect(line.length).toBeLessThanOrEqual(40);
    expect(stdout.lines[1]).toMatch(/^tbl_\S*…\s{2}a_very\S*…\s{2}OK$/);
  });

  it('never cuts ids, versions or times: free text shrinks first, then the column of least value goes', async () => {
    const id = 'tbl_23833d73dd504c0f9e1b';
    const rows = [
      {
        id,
        name: 'a_rather_long_table_name_to_cut',
        state: 'CERTIFIED',
        env: 'production',
        at: '2026-11-24T14:40:00.000Z',
      },
    ];
    const columns = [
      { header: 'Id', kind: 'id' as const, value: (r: (typeof rows)[number]) => r.id },
      { header: 'Name', value: (r: (typeof rows)[number]) => r.name },
      { header: 'State', kind: 'state' as const, value: (r: (typeof rows)[number]) => r.state },
      { header: 'Env', kind: 'version' as const, value: (r: (typeof rows)[number]) => r.env },
      { header: 'At', kind: 'time' as const, value: (r: (typeof rows)[number]) => r.at },
    ];
    for (const width of [100, 72, 60, 40]) {
      const { out, stdout } = output({ tty: true, stdoutColumns: width, env: { NO_COLOR: '1' } });
      await out.table(rows, columns);
      for (const line of stdout.lines) expect(line.length).toBeLessThanOrEqual(width);
      expect(stdout.lines[1]).toContain(id);
      expect(stdout.lines[1]).toContain('CERTIFIED');
      const headers = stdout.lines[0]?.split(/\s+/);
      if (width === 100) expect(stdout.lines[1]).toContain('a_rather_long_table_name_to_cut');
      if (width === 72) expect(stdout.lines[1]).toMatch(/a_rathe\S*…/);
      // Free text goes first, then the time; the id and the state stay whole.
      if (width === 60) expect(headers).toEqual(['ID', 'STATE', 'ENV', 'AT']);
      if (width === 40) expect(headers).toEqual(['ID', 'STATE']);
    }
  });

  describe('which columns survive a narrow terminal (docs/output.md)', () => {
    type Entry = {
      at: string;
      action: string;
      resource: string;
      table: string;
      user: string;
      env: string;
      resolved: string;
    };
    const entry: Entry = {
      at: new Date(Date.now() - 60_000).toISOString(),
      action: 'TABLE_CERTIFIED',
      resource: 'semantic_contract',
      table: 'tbl_aa2a66833cd5e202',
      user: 'admin@example.com',
      env: 'production',
      resolved: '',
    };
    const columns = [
      { header: 'Time', kind: 'time' as const, value: (e: Entry) => e.at },
      { header: 'Action', kind: 'version' as const, value: (e: Entry) => e.action },
      { header: 'Resource', value: (e: Entry) => e.resource },
      { header: 'Table', kind: 'id' as const, value: (e: Entry) => e.table },
      { header: 'User', kind: 'who' as const, value: (e: Entry) => e.user },
      { header: 'Env', kind: 'version' as const, value: (e: Entry) => e.env },
      { header: 'Resolved by', kind: 'version' as const, value: (e: Entry) => e.resolved },
    ];

    async function headersAt(width: number, rows: Entry[] = [entry]) {
      const { out, stdout } = output({ tty: true, stdoutColumns: width, env: { NO_COLOR: '1' } });
      await out.table(rows, columns);
      for (const line of stdout.lines) expect(line.length).toBeLessThanOrEqual(width);
      return { headers: stdout.lines[0]?.split(/\s{2,}/), row: stdout.lines[1] ?? '' };
    }

    it('drops a column empty in every row before anything else, and keeps it when a row fills it', async () => {
      const { headers } = await headersAt(100);
      expect(headers).not.toContain('RESOLVED BY');
      expect(headers).toContain('RESOURCE');
      expect((await headersAt(100, [entry, { ...entry, resolved: 'v3' }])).headers).toContain('RESOLVED BY');
    });

    it('keeps who did it whole at 80 and 60 columns: plain text and times go first', async () => {
      for (const width of [80, 60]) {
        const { headers, row } = await headersAt(width);
        expect(headers).toContain('USER');
        expect(row).toContain('admin@example.com');
        expect(row).toContain('tbl_aa2a66833cd5e202');
      }
      expect((await headersAt(80)).headers).toEqual(['TIME', 'ACTION', 'TABLE', 'USER', 'ENV']);
    });

    it('cuts who did it only when nothing but ids and states is left to drop', async () => {
      const { headers, row } = await headersAt(36);
      expect(headers).toEqual(['TABLE', 'USER']);
      expect(row).toMatch(/^tbl_aa2a66833cd5e202 {2}admin@e\S*…$/);
    });
  });

  it('on a terminal: relative times and coloured states; piped: ISO times and no colour', async () => {
    const at = new Date(Date.now() - 3 * 60_000 - 5000).toISOString();
    const rows = [
      { state: 'CERTIFIED', at },
      { state: 'QUARANTINED', at },
      { state: 'PENDING_REVIEW', at },
    ];
    const columns = [
      { header: 'State', kind: 'state' as const, value: (r: (typeof rows)[number]) => r.state },
      { header: 'At', kind: 'time' as const, value: (r: (typeof rows)[number]) => r.at },
    ];
    const tty = output({ tty: true, env: { FORCE_COLOR: '1' } });
    await tty.out.table(rows, columns);
    expect(tty.stdout.lines[1]).toContain('3m ago');
    expect(tty.stdout.lines[1]).toContain('\u001b[32mCERTIFIED');
    expect(tty.stdout.lines[2]).toContain('\u001b[31mQUARANTINED');
    expect(tty.stdout.lines[3]).toContain('\u001b[33mPENDING_REVIEW');
    const plain = output({ tty: true, env: { NO_COLOR: '1' } });
    await plain.out.table(rows, columns);
    expect(plain.stdout.text).not.toMatch(ansi);
    const piped = output({ tty: false, env: { FORCE_COLOR: '1' } });
    await piped.out.table(rows, columns);
    expect(piped.stdout.lines[0]).toBe(`CERTIFIED\t${at}`);
  });

  it('says Showing N of M on a terminal when -L cuts; piped, only the rows', async () => {
    const rows = [{ id: 't_1' }, { id: 't_2' }, { id: 't_3' }];
    const columns = [{ header: 'ID', kind: 'id' as const, value: (r: { id: string }) => r.id }];
    const tty = output({ tty: true, env: { NO_COLOR: '1' } });
    await tty.out.table(rows, columns, { limit: 2, noun: 'tables' });
    expect(tty.stdout.lines).toEqual(['Showing 2 of 3 tables', '', 'ID', 't_1', 't_2']);
    const all = output({ tty: true, env: { NO_COLOR: '1' } });
    await all.out.table(rows, columns, { limit: 3, noun: 'tables' });
    expect(all.stdout.text).not.toContain('Showing');
  });

  it('measures wide characters as two cells when aligning', async () => {
    const { out, stdout } = output({ tty: true, env: { NO_COLOR: '1' } });
    await out.table(
      [
        { name: '表格', state: 'A' },
        { name: 'ab', state: 'B' },
      ],
      [
        { header: 'NAME', value: (r) => r.name },
        { header: 'STATE', value: (r) => r.state },
      ],
    );
    expect(stdout.lines).toEqual(['NAME  STATE', '表格  A', 'ab    B']);
  });

  it('prints nothing on stdout for an empty list, and says so on stderr', async () => {
    const { out, stdout, stderr } = output({ tty: true });
    await out.table([], [{ header: 'ID', value: (r: { id: string }) => r.id }], { empty: 'No tables.' });
    expect(stdout.text).toBe('');
    expect(stderr.lines).toEqual(['No tables.']);
  });

  describe('a list that pages, on a terminal', () => {
    type Row = { id: string; name: string };
    const columns = [
      { header: 'Id', kind: 'id' as const, value: (r: Row) => r.id },
      { header: 'Name', value: (r: Row) => r.name },
    ];

    it('writes the header and the first page before the second page is asked for', async () => {
      const { out, stdout } = output({ tty: true, env: { NO_COLOR: '1' } });
      const asked: string[] = [];
      async function* pages() {
        yield { rows: [{ id: 't_1', name: 'orders' }] };
        asked.push(stdout.text);
        yield { rows: [{ id: 't_2', name: 'lines' }] };
      }
      await out.tablePages(pages(), columns);
      expect(asked).toEqual(['ID   NAME\nt_1  orders\n']);
      expect(stdout.lines).toEqual(['ID   NAME', 't_1  orders', 't_2  lines']);
    });

    it("keeps the first page's columns: a wider later name is cut, a longer later id is whole", async () => {
      const { out, stdout } = output({ tty: true, env: { NO_COLOR: '1' } });
      async function* pages() {
        yield { rows: [{ id: 't_1', name: 'orders' }] };
        yield { rows: [{ id: 't_123456', name: 'order_lines_by_region' }] };
      }
      await out.tablePages(pages(), columns);
      expect(stdout.lines).toEqual(['ID   NAME', 't_1  orders', 't_123456  order…']);
    });

    it('says Showing N of M first when -L cuts, and stops at N rows across pages', async () => {
      const { out, stdout } = output({ tty: true, env: { NO_COLOR: '1' } });
      async function* pages() {
        yield { rows: [{ id: 't_1', name: 'a' }], total: 9 };
        yield {
          rows: [
            { id: 't_2', name: 'b' },
            { id: 't_3', name: 'c' },
          ],
        };
      }
      await out.tablePages(pages(), columns, { limit: 2, noun: 'tables' });
      expect(stdout.lines).toEqual(['Showing 2 of 9 tables', '', 'ID   NAME', 't_1  a', 't_2  b']);
    });

    it('asks for no page more once stdout is closed (| head -1), or once -L is reached', async () => {
      for (const json of [true, false]) {
        const { out, stdout } = output({ json, env: { NO_COLOR: '1' } });
        let asked = 0;
        async function* pages() {
          while (asked < 5) {
            asked += 1;
            yield { rows: [{ id: `t_${asked}`, name: 'orders' }] };
          }
        }
        // The reader goes away after the first page, as head does: Node's stdout is no longer writable.
        const write = stdout.write.bind(stdout);
        stdout.write = (chunk: string) => {
          Object.assign(stdout, { writable: false });
          return write(chunk);
        };
        await out.tablePages(pages(), columns);
        expect(asked).toBe(1);
      }
      const { out } = output({ json: true });
      let asked = 0;
      async function* pages() {
        while (asked < 5) {
          asked += 1;
          yield { rows: [{ id: `t_${asked}`, name: 'orders' }] };
        }
      }
      await out.tablePages(pages(), columns, { limit: 2 });
      expect(asked).toBe(2);
    });

    it('says so on stderr when no page has a row', async () => {
      const { out, stdout, stderr } = output({ tty: true });
      async function* pages() {
        yield { rows: [] as Row[] };
      }
      await out.tablePages(pages(), columns, { empty: 'No tables.' });
      expect(stdout.text).toBe('');
      expect(stderr.lines).toEqual(['No tables.']);
    });
  });

  it('keeps the first --limit rows, in the table and under --json', async () => {
    const rows = [{ id: 't_1' }, { id: 't_2' }, { id: 't_3' }];
    const columns = [{ header: 'ID', value: (r: { id: string }) => r.id }];
    const human = output();
    await human.out.table(rows, columns, { limit: 2 });
    expect(human.stdout.lines).toEqual(['t_1', 't_2']);
    const json = output({ json: true });
    await json.out.table(rows, columns, { limit: 1 });
    expect(json.stdout.lines).toEqual(['{"id":"t_1"}']);
  });

  it('sends messages, warnings and errors to stderr, with the suggestion under the error', () => {
    const { out, stdout, stderr } = output();
    out.info('Pushed.');
    out.warn('token expires soon');
    out.error(new CliError('No such file: x', { exitCode: ExitCode.Usage, suggestion: 'Check the path.' }));
    expect(stdout.text).toBe('');
    expect(stderr.lines).toEqual([
      'Pushed.',
      'Warning: token expires soon',
      'Error: No such file: x',
      'Check the path.',
    ]);
  });

  it('without a TTY on stderr shows no spinner, only the final line with the one mark', async () => {
    const { out, stderr } = output({ tty: false });
    const spinner = await out.spinner('waiting for the baseline job');
    spinner.update('still waiting');
    spinner.succeed('Baseline done');
    expect(stderr.lines).toEqual(['✓ Baseline done']);
  });

  it('shows a spinner on a TTY stderr, ends it with the final line, and keeps stdout clean', async () => {
    const { out, stdout, stderr } = output({ tty: true });
    const spinner = await out.spinner('waiting for the baseline job');
    spinner.update('still waiting\u001b]0;x\u0007');
    spinner.succeed('Baseline done');
    expect(stdout.text).toBe('');
    expect(stderr.text).toContain('waiting for the baseline job');
    expect(stderr.text).toContain('Baseline done');
    expect(stderr.text).not.toContain('\u001b]0;x');
  });

  it('on a TTY that reports no width (a bare pty), prints plain lines instead of a spinner', async () => {
    const { out, stderr } = output({ tty: true, columns: 0, env: { NO_COLOR: '1' } });
    const spinner = await out.spinner('waiting for the baseline job');
    spinner.update('still waiting');
    spinner.succeed('Baseline done');
    expect(stderr.lines).toEqual(['waiting for the baseline job', '✓ Baseline done']);
  });

  it('ends a spinner on a terminal with the one mark, ✓, as settings and aliases confirm', async () => {
    const { out, stderr } = output({ tty: true, env: { NO_COLOR: '1' } });
    const spinner = await out.spinner('Exporting orders…');
    spinner.succeed('Exported 3 rows of orders.');
    expect(stderr.text).toContain('✓ Exported 3 rows of orders.');
    expect(stderr.text).not.toContain('✔');
  });

  it('confirms on stderr with ✓ (green on a terminal), never on stdout, and says nothing under --json', () => {
    const human = output({ tty: true });
    human.out.success('Created record rec_1 in orders.');
    expect(human.stdout.text).toBe('');
    expect(human.stderr.text).toBe('\u001b[32m✓\u001b[39m Created record rec_1 in orders.\n');
    const piped = output({ tty: false });
    piped.out.success('Deleted record rec_1 of orders.');
    expect(piped.stderr.lines).toEqual(['✓ Deleted record rec_1 of orders.']);
    const json = output({ json: true });
    json.out.success('Created record rec_1 in orders.');
    expect(json.stdout.text + json.stderr.text).toBe('');
  });

  it("keeps a confirmation and a detail view's line one line: a line break of a service's string reads as a space", () => {
    const { out, stdout, stderr } = output({ tty: false });
    out.success('Rejected orders: now REJECTED\n✓ Certified orders: contract ctr_1 ACTIVE.');
    expect(stderr.lines).toEqual([
      '✓ Rejected orders: now REJECTED ✓ Certified orders: contract ctr_1 ACTIVE.',
    ]);
    out.printField(out.style('bold', 'Table:  '), 'orders\r\nState:  CERTIFIED', out.style('red', 'x\n\ny'));
    out.print('multi\nline');
    expect(stdout.lines).toEqual(['Table:  orders State:  CERTIFIEDx y', 'multi', 'line']);
  });

  describe('during: a spinner for a wait', () => {
    it('turns on a terminal while the work runs and is gone when it ends, the answer passed on', async () => {
      const { out, stdout, stderr } = output({ tty: true, env: { NO_COLOR: '1' } });
      let seen = '';
      const answer = await out.during('Running Gate 1 on orders…', async () => {
        seen = stderr.text;
        return 42;
      });
      expect(answer).toBe(42);
      expect(seen).toContain('Running Gate 1 on orders…');
      expect(stdout.text).toBe('');
      // ora hides the cursor while it spins and shows it again when stopped
      expect(stderr.text).toContain('\u001b[?25h');
    });

    it('stops the spinner when the work fails, and the failure goes on', async () => {
      const { out, stderr } = output({ tty: true, env: { NO_COLOR: '1' } });
      await expect(
        out.during('Certifying orders…', async () => {
          throw new Error('refused');
        }),
      ).rejects.toThrow('refused');
      expect(stderr.text).toContain('\u001b[?25h');
    });

    it('says the wait once as a line on a terminal that reports no width', async () => {
      const { out, stderr } = output({ tty: true, columns: 0, env: { NO_COLOR: '1' } });
      await out.during('Running Gate 1 on orders…', async () => undefined);
      expect(stderr.lines).toEqual(['Running Gate 1 on orders…']);
    });

    it('prints nothing piped or under --json', async () => {
      for (const options of [{ tty: false }, { tty: true, json: true }]) {
        const { out, stdout, stderr } = output(options);
        await out.during('Running Gate 1 on orders…', async () => undefined);
        expect(stdout.text + stderr.text).toBe('');
      }
    });
  });

  it('keeps a line said while a spinner turns above it', async () => {
    const { out, stderr } = output({ tty: true, env: { NO_COLOR: '1' } });
    await out.during('Running Gate 1 on orders…', async () => {
      out.warn('token expires in 2 minutes');
    });
    expect(stderr.text).toContain('Warning: token expires in 2 minutes\n');
  });

  it('gives the cursor back when interrupted on a TTY', () => {
    const { out, stderr } = output({ tty: true });
    out.interrupted();
    expect(stderr.text).toContain('\u001b[?25h');
  });
});

describe('colour decision', () => {
  const tty = { isTTY: true, write: () => true };
  const pipe = { isTTY: false, write: () => true };
  it.each([
    ['a TTY', tty, {}, true],
    ['a pipe', pipe, {}, false],
    ['NO_COLOR on a TTY', tty, { NO_COLOR: '1' }, false],
    ['NO_COLOR beats FORCE_COLOR', tty, { NO_COLOR: '1', FORCE_COLOR: '1' }, false],
    ['FORCE_COLOR on a pipe', pipe, { FORCE_COLOR: '1' }, true],
    ['FORCE_COLOR=0 on a TTY', tty, { FORCE_COLOR: '0' }, false],
    ['TERM=dumb', tty, { TERM: 'dumb' }, false],
    ['CLICOLOR=0 on a TTY (as gh reads it)', tty, { CLICOLOR: '0' }, false],
    ['CLICOLOR=1 on a TTY', tty, { CLICOLOR: '1' }, true],
    ['CLICOLOR_FORCE beats CLICOLOR=0', pipe, { CLICOLOR: '0', CLICOLOR_FORCE: '1' }, true],
  ])('%s', (_name, stream, env, expected) => {
    expect(colorEnabled(stream, env)).toBe(expected);
  });
});

describe('jsonRequested', () => {
  it('is on with --json before --, or GDS_CONTENT_TYPE=json', () => {
    expect(jsonRequested(['gate', 'diff', '--json'], {})).toBe(true);
    expect(jsonRequested(['x', '--', '--json'], {})).toBe(false);
    expect(jsonRequested(['x'], { GDS_CONTENT_TYPE: 'JSON' })).toBe(true);
    expect(jsonRequested(['x'], {})).toBe(false);
  });
});

describe('warn', () => {
  it('a Warning: line in human mode, one {"warning":{"message"}} line on stderr under --json', () => {
    const human = output();
    human.out.warn('No OS keychain answered');
    expect(human.stderr.lines).toEqual(['Warning: No OS keychain answered']);
    const json = output({ json: true });
    json.out.warn('No OS keychain answered\u001b[2J');
    expect(json.stdout.text).toBe('');
    // As an error's message: every character kept, the escape written as JSON's \u001b, never raw.
    expect(json.stderr.text).toBe('{"warning":{"message":"No OS keychain answered\\u001b[2J"}}\n');
  });
});

describe("stderr's one-line methods: a service's string never starts a line of its own", () => {
  const forged = 'orders\nForged: all clear\r\u2028✓ Certified';

  it('info, warn, footnote and success put every segment on one line, whoever forgot onOneLine', () => {
    const { out, stderr } = output();
    out.info('Job ', out.style('bold', forged), ' ended.');
    out.warn(`${forged} was not certified`);
    out.footnote(`More records of ${forged}`);
    out.success(`Certified ${forged}.`);
    expect(stderr.lines).toEqual([
      'Job orders Forged: all clear ✓ Certified ended.',
      'Warning: orders Forged: all clear ✓ Certified was not certified',
      'More records of orders Forged: all clear ✓ Certified',
      '✓ Certified orders Forged: all clear ✓ Certified.',
    ]);
  });

  it("an error's message and suggestion are a line each, unless gds wrote their lines with `lines`", () => {
    const { out, stderr } = output();
    out.error(new CliError(forged, { exitCode: ExitCode.Refused, suggestion: `gds status ${forged}` }));
    out.error(
      new CliError(lines`2 tables are named ${forged}:\n${['  tbl_1  prod', `  tbl_2  ${forged}`]}`, {
        exitCode: ExitCode.Usage,
        suggestion: lines`Pick one:\n  gds status tbl_1`,
      }),
    );
    expect(stderr.lines).toEqual([
      'Error: orders Forged: all clear ✓ Certified',
      'gds status orders Forged: all clear ✓ Certified',
      'Error: 2 tables are named orders Forged: all clear ✓ Certified:',
      '  tbl_1  prod',
      '  tbl_2  orders Forged: all clear ✓ Certified',
      'Pick one:',
      '  gds status tbl_1',
    ]);
  });

  it("a service's SQL error: on the Error line, PostgreSQL's caret block indented under it", () => {
    const { out, stderr } = output();
    const message = 'syntax error at or near "FORM"\nLINE 1: SELECT * FORM t\n                 ^\nForged: x';
    out.error(new CliError(message, { exitCode: ExitCode.Refused }));
    expect(stderr.lines).toEqual([
      'Error: syntax error at or near "FORM" Forged: x',
      '  LINE 1: SELECT * FORM t',
      '                   ^',
    ]);
  });

  it('under --json a warning and an error keep the line breaks JSON carries', () => {
    const { out, stderr } = output({ json: true });
    out.warn('first\nsecond');
    out.error(new CliError('first\nsecond', { exitCode: ExitCode.Refused }));
    const [warning, error] = stderr.lines.map(
      (line) => JSON.parse(line) as Record<string, { message: string }>,
    );
    expect(warning?.warning?.message).toBe('first\nsecond');
    expect(error?.error?.message).toBe('first\nsecond');
  });

  it("infoDocument keeps the lines of a document (a refused `gds api` call's JSON body)", () => {
    const { out, stderr } = output();
    out.infoDocument('{\n  "a": 1\n}');
    out.infoLines(lines`one\ntwo ${'x\ny'}`);
    expect(stderr.lines).toEqual(['{', '  "a": 1', '}', 'one', 'two x y']);
  });
});

describe('--jq over many records (one jq run takes the records given meanwhile)', () => {
  it('answers each record on its own, in order, as jq run per record would', async () => {
    const { out, stdout } = output({ jq: 'select(.n % 2 == 0) | .name' });
    for (let n = 0; n < 300; n++) out.record({ name: `t${n}`, n });
    await out.flush();
    expect(stdout.lines).toEqual(Array.from({ length: 150 }, (_, i) => `t${i * 2}`));
  });

  it('writes what came before the first record jq fails on, then fails with its reason', async () => {
    const { out, stdout } = output({ jq: '.a | ascii_downcase' });
    out.record({ a: 'X' });
    out.record({ a: 1 });
    out.record({ a: 'Z' });
    await expect(out.flush()).rejects.toMatchObject({
      exitCode: ExitCode.Failure,
      code: 'jq_failed',
      message: expect.stringMatching(/^--jq \.a \| ascii_downcase: jq: error: .*string/),
    });
    expect(stdout.lines).toEqual(['x']);
  });

  it('keeps one jq run per record for a filter that reads other inputs', async () => {
    const { out, stdout } = output({ jq: '[.n, (try input.n catch null)]' });
    out.record({ n: 1 });
    out.record({ n: 2 });
    await out.flush();
    expect(stdout.lines).toEqual(['[1,null]', '[2,null]']);
  });

  it('runs jq as many times as a long list needs (jq-wasm 1.0 failed at its 312th run in a process)', async () => {
    const { out, stdout } = output({
      jq: '[.n, (try input.n catch null)] | .[0] | tostring | ascii_downcase',
    });
    for (let n = 0; n < 700; n++) out.record({ n });
    await out.flush();
    expect(stdout.lines).toEqual(Array.from({ length: 700 }, (_, n) => String(n)));
  });
});

describe('--jq and C1 characters (cp1252 text read as latin1: "Žižek" holds U+008E and U+009E)', () => {
  const zizek = { email: 'zizek@example.com', full_name: 'Slavoj \u008Ei\u009Eek' };
  const after = { email: 'after@example.com', full_name: 'After Record' };
  const raw = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202e]/;

  async function filtered(jq: string, tty: boolean): Promise<string[]> {
    const { out, stdout } = output({ jq, tty });
    out.record(zizek);
    out.record(after);
    await out.flush();
    return stdout.lines;
  }

  // `.` and `{…}` gds answers itself (jq-subset.ts); `[…]` goes through one jq run over both records, and
  // `$__loc__` through one jq run per record.
  it.each([
    ['.', [zizek, after]],
    ['{full_name}', [{ full_name: zizek.full_name }, { full_name: after.full_name }]],
    ['[.full_name, .email]', [Object.values(zizek).reverse(), Object.values(after).reverse()]],
    [
      '[.full_name, $__loc__.line]',
      [
        [zizek.full_name, 1],
        [after.full_name, 1],
      ],
    ],
  ])(
    '--jq %s: every record whole, JSON with C1 as \\u escapes, piped and on a terminal',
    async (jq, expected) => {
      for (const tty of [false, true]) {
        const lines = await filtered(jq, tty);
        for (const line of lines) expect(line).not.toMatch(raw);
        expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual(expected);
      }
    },
  );

  // `.full_name` gds answers itself; `… , …` goes through one jq run; `$__loc__` one jq run per record.
  it.each([
    ['.full_name', [zizek.full_name, after.full_name], ['Slavoj iek', after.full_name]],
    [
      '.full_name, .email',
      [zizek.full_name, zizek.email, after.full_name, after.email],
      ['Slavoj iek', zizek.email, after.full_name, after.email],
    ],
    [
      '.full_name, $__loc__.file',
      [zizek.full_name, '<top-level>', after.full_name, '<top-level>'],
      ['Slavoj iek', '<top-level>', after.full_name, '<top-level>'],
    ],
  ])(
    '--jq %s: strings raw piped (as jq -r), stripped on a terminal, no record lost',
    async (jq, piped, terminal) => {
      expect(await filtered(jq, false)).toEqual(piped);
      expect(await filtered(jq, true)).toEqual(terminal);
    },
  );
});

describe('--jq failing at run time', () => {
  it('keeps the failure for flush(), so a later wait does not crash the process on an unhandled rejection', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { out, stdout } = output({ jq: '.a | ascii_downcase' });
      out.record({ a: 1 });
      out.record({ a: 'B' });
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(unhandled).toEqual([]);
      await expect(out.flush()).rejects.toMatchObject({ exitCode: ExitCode.Failure, code: 'jq_failed' });
      expect(stdout.text).toBe('');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});

describe("error: a service's gate1.yml diagnostics under it", () => {
  it('says the error and its diagnostic when the diagnostic carries no severity (or not a string)', () => {
    const { out, stderr } = output();
    const diagnostics = [
      { file: 'gate1.yml', line: 1, column: 2, message: 'bad', code: 'c' },
      { file: 'gate1.yml', line: 3, column: 4, severity: 7, message: 'worse', code: 'd' },
    ];
    expect(() =>
      out.error(new CliError('Refused', { exitCode: ExitCode.Conflict, details: { diagnostics } })),
    ).not.toThrow();
    expect(stderr.lines[0]).toBe('Error: Refused');
    expect(stderr.lines[1]).toMatch(/^ {2}gate1\.yml:1:2 .*: bad \(c\)$/);
    expect(stderr.lines[2]).toMatch(/^ {2}gate1\.yml:3:4 .*: worse \(d\)$/);
  });
});
