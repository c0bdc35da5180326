// The spinner of a wait on a terminal's stderr (ora, loaded only then). Its texts are one line each
// (onOneLine): ora redraws one line, and a service's string in it (`Baseline job … QUEUED\nForged: …`) forges
// no line of gds's own when it ends.
import { styleText } from 'node:util';
import { onOneLine } from '../core/terminal-text.js';

export interface Spinner {
  update(text: string): void;
  /** Ends the spinner with a success line (printed as a plain line on stderr when no spinner is shown). */
  succeed(text?: string): void;
  fail(text?: string): void;
  stop(): void;
}

/** A spinner turning: a line said meanwhile is written after `clear()`, then `render()` draws it again. */
export interface TurningSpinner {
  stop(): unknown;
  clear(): unknown;
  render(): unknown;
}

/**
 * Starts an ora spinner on `stream` saying `text` (coloured when `colour()` says), ended with `successMark` or
 * a failure; `onEnd` is called when it ends, any way but by `turning.stop()`.
 */
export async function oraSpinner(
  text: string,
  stream: NodeJS.WritableStream,
  colour: () => boolean,
  successMark: string,
  onEnd: () => void,
): Promise<{ spinner: Spinner; turning: TurningSpinner }> {
  const { default: ora } = await import('ora');
  const turning = ora({
    text: onOneLine(text),
    stream,
    isEnabled: true,
    discardStdin: false,
    color: colour() ? 'cyan' : false,
  }).start();
  const spinner: Spinner = {
    update: (t) => {
      turning.text = onOneLine(t);
    },
    succeed: (t) => {
      const mark = colour() ? styleText('green', successMark, { validateStream: false }) : successMark;
      turning.stopAndPersist({
        symbol: mark,
        ...(t === undefined ? {} : { text: onOneLine(t) }),
      });
      onEnd();
    },
    fail: (t) => {
      turning.fail(t === undefined ? undefined : onOneLine(t));
      onEnd();
    },
    stop: () => {
      turning.stop();
      onEnd();
    },
  };
  return { spinner, turning };
}
