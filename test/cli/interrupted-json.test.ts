// A Ctrl-C (or SIGTERM) under --json with stderr on a terminal: gds gave the cursor back as it does for a spinner,
// writing the escape `ESC[?25h` and an empty line to stderr before its `{"error":…}` line, though under --json no
// spinner ever turns (stderr holds JSON lines only, for a program to read). Under --json stderr now gets the one
// error line and nothing else; without --json the cursor still comes back. In-process: the output module with a
// terminal standing in for stderr.
import { describe, expect, it } from 'vitest';
import { exitInterrupted, Output } from '../../src/cli/output.js';

class Terminal {
  readonly isTTY = true;
  readonly columns = 80;
  text = '';
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

function interruptedRun(json: boolean) {
  const stdout = new Terminal();
  const stderr = new Terminal();
  const out = new Output({ json, stdout, stderr, env: {} });
  const exit = process.exit;
  process.exit = ((code?: number) => {
    throw new Error(`exit ${String(code)}`);
  }) as typeof process.exit;
  try {
    expect(() => exitInterrupted(out)).toThrow('exit 130');
  } finally {
    process.exit = exit;
  }
  return { stdout: stdout.text, stderr: stderr.text };
}

describe('interrupted on a terminal', () => {
  it('--json: stderr holds the one error line, no escape sequence, and stdout nothing', () => {
    const { stdout, stderr } = interruptedRun(true);
    expect(stdout).toBe('');
    expect(stderr).not.toMatch(/[\u001b\u009b]/);
    const lines = stderr.split('\n').filter((line) => line !== '');
    expect(stderr).toBe(`${lines.join('\n')}\n`);
    expect(lines.map((line) => JSON.parse(line) as unknown)).toMatchObject([
      { error: { code: 'interrupted', message: 'Interrupted.' } },
    ]);
  });

  it('without --json: the cursor comes back', () => {
    expect(interruptedRun(false).stderr).toContain('\u001b[?25h');
  });
});
