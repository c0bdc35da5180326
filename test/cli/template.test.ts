// --template (gh's habit, with a Mustache template instead of a Go one): each JSON record printed as the
// template makes it, one line each, in this process with injected streams.
import { describe, expect, it } from 'vitest';
import { CliError } from '../../src/core/errors.js';
import { Output } from '../../src/cli/output.js';
import { compileTemplate } from '../../src/cli/template.js';

async function output(template: string, isTTY = false) {
  const stdout = {
    isTTY,
    text: '',
    write(chunk: string) {
      this.text += chunk;
      return true;
    },
  };
  const out = new Output({
    json: false,
    stdout,
    stderr: stdout,
    env: {},
    template: await compileTemplate(template),
  });
  return { out, stdout };
}

describe('--template', () => {
  it('prints each record as the template makes it, one line each, with nothing HTML-escaped', async () => {
    const { out, stdout } = await output('{{id}}\t{{name}} ({{certification.state}})');
    expect(out.json).toBe(true);
    out.record({ id: 'tbl_1', name: 'orders & co', certification: { state: 'CERTIFIED' } });
    out.record({ id: 'tbl_2', name: '<b>', certification: { state: 'PENDING_REVIEW' } });
    expect(stdout.text).toBe('tbl_1\torders & co (CERTIFIED)\ntbl_2\t<b> (PENDING_REVIEW)\n');
  });

  it('repeats a section per item, prints objects as JSON, and skips a record it renders empty', async () => {
    const { out, stdout } = await output(
      '{{#live}}{{id}}: {{#columns}}[{{.}}]{{/columns}} {{meta}}{{/live}}',
    );
    out.record({ id: 'a', live: true, columns: ['x', 'y'], meta: { n: 1 } });
    out.record({ id: 'b', live: false });
    out.record({ id: 'c', live: true, columns: [], meta: null });
    expect(stdout.text).toBe('a: [x][y] {"n":1}\nc:  \n');
  });

  it('adds no second newline to a template that ends with one, and strips terminal control characters on a terminal', async () => {
    const { out, stdout } = await output('{{name}}\n', true);
    out.record({ name: 'evil\u001b]0;owned\u0007\u001b[2Jname' });
    expect(stdout.text).toBe('evilname\n');
  });

  it('keeps the whole line after a C1 character: the text as it is piped, stripped on a terminal', async () => {
    // cp1252 "Žižek" read as latin1: U+008E and U+009E (which starts a terminal's PM string).
    const zizek = { email: 'zizek@example.com', full_name: 'Slavoj \u008Ei\u009Eek' };
    const after = { email: 'after@example.com', full_name: 'After Record' };
    const piped = await output('{{full_name}} <{{email}}>');
    piped.out.record(zizek);
    piped.out.record(after);
    expect(piped.stdout.text).toBe(
      'Slavoj \u008Ei\u009Eek <zizek@example.com>\nAfter Record <after@example.com>\n',
    );
    const terminal = await output('{{full_name}} <{{email}}>', true);
    terminal.out.record(zizek);
    terminal.out.record(after);
    expect(terminal.stdout.text).toBe('Slavoj iek <zizek@example.com>\nAfter Record <after@example.com>\n');
  });

  it('prints an object as JSON with C1 and format characters as \\u escapes', async () => {
    const { out, stdout } = await output('{{meta}}');
    out.record({ meta: { name: 'orders \u202eabc \u009b31m tail' } });
    expect(stdout.text).toBe('{"name":"orders \\u202eabc \\u009b31m tail"}\n');
  });

  it('a malformed template is a usage error (exit 2) before anything is sent', async () => {
    const error: unknown = await compileTemplate('{{#rows}}{{id}}').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).toContain('Unclosed section "rows"');
  });
});
