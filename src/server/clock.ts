import { readFile } from 'node:fs/promises';

/** The server's notion of "now" in epoch milliseconds; tests inject one they can move forward. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function isoAt(clock: Clock): string {
  return new Date(clock()).toISOString();
}

/** What a clock offset file may hold: a whole number of seconds, possibly negative; blank is 0. */
export function parseClockOffset(text: string): number | undefined {
  const trimmed = text.trim();
  if (trimmed === '') return 0;
  return /^[+-]?\d{1,12}$/.test(trimmed) ? Number(trimmed) : undefined;
}

/**
 * `--clock-offset-file FILE`: a clock that many seconds ahead of `base`, FILE read again by `reload` (at each
 * request), so a test moves the server's time from outside. A missing or empty file is 0; a file that holds
 * anything else (or cannot be read) keeps the last good offset and is reported once per content through `warn`.
 */
export function offsetFileClock(
  file: string,
  base: Clock = systemClock,
  warn: (message: string) => void = (message) => process.stderr.write(`${message}\n`),
): { clock: Clock; reload(): Promise<void> } {
  let offsetMs = 0;
  let reported: string | undefined;
  return {
    clock: () => base() + offsetMs,
    async reload() {
      let text = '';
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') text = `(unreadable: ${String(error)})`;
      }
      const seconds = parseClockOffset(text);
      if (seconds !== undefined) {
        offsetMs = seconds * 1000;
        reported = undefined;
      } else if (reported !== text) {
        reported = text;
        warn(
          `clock offset file ${file} holds ${JSON.stringify(text.slice(0, 40))}, not a whole number of seconds; the offset stays ${offsetMs / 1000} s.`,
        );
      }
    },
  };
}
