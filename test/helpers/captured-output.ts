// An Output whose stdout and stderr are strings to read back, on a terminal or piped: for the views and
// replies a test checks without running a command.
import { Output } from '../../src/cli/output.js';

export class CapturedStream {
  text = '';
  constructor(readonly isTTY: boolean) {}
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

export function capturedOutput(tty: boolean): {
  out: Output;
  stdout: CapturedStream;
  stderr: CapturedStream;
} {
  const stdout = new CapturedStream(tty);
  const stderr = new CapturedStream(tty);
  return { out: new Output({ json: false, stdout, stderr, env: { NO_COLOR: '1' } }), stdout, stderr };
}
