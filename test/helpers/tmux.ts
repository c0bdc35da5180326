// A program in a real terminal of a given size, driven by keys: tmux on a socket of the test's own (no
// ~/.tmux.conf, no other session touched).
//
//   const term = await startTerminal(['zsh', '-f'], { width: 80, height: 24, env, cwd });
//   await term.send('gds gate ap', 'Tab');          // literal text, then tmux key names (Tab, Enter, C-c, Up)
//   const screen = await term.waitFor(/gds gate apply/);   // the visible screen once it shows this
//   await term.close();
//
// waitFor polls the screen until it matches and throws with the last screen when it never does: what is
// asserted is what the screen shows, never how long it took.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { collect } from '../cli/helpers/cli-process.js';

export interface Terminal {
  /** Types each argument: a key name tmux knows (Tab, Enter, BSpace, Up, Down, C-c, C-u, C-l) as that key,
   *  anything else as literal text. */
  send(...keys: string[]): Promise<void>;
  /** The visible screen, one line per row, trailing spaces trimmed. */
  screen(): Promise<string>;
  /** The lines scrolled off the top, then the visible screen: all a person can scroll back to. */
  scrollback(): Promise<string>;
  /** The screen once `pattern` matches it (or `pattern(screen)` is true); throws with the screen after 20 s. */
  waitFor(
    pattern: RegExp | ((screen: string) => boolean | Promise<boolean>),
    timeoutMs?: number,
  ): Promise<string>;
  close(): Promise<void>;
}

const KEY_NAMES = /^(Tab|BTab|Enter|Escape|BSpace|Up|Down|Left|Right|Space|C-[a-z])$/;

export async function startTerminal(
  command: string[],
  options: { width: number; height: number; env: NodeJS.ProcessEnv; cwd?: string },
): Promise<Terminal> {
  const socket = join(tmpdir(), `gds-tmux-${randomUUID()}`);
  const session = 'test';
  const tmux = async (...args: string[]) => {
    const result = await collect(
      spawn('tmux', ['-S', socket, '-f', '/dev/null', ...args], {
        env: { ...options.env, TERM: 'xterm-256color' },
        cwd: options.cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    if (result.code !== 0) throw new Error(`tmux ${args.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  await tmux(
    'new-session',
    '-d',
    '-s',
    session,
    '-x',
    String(options.width),
    '-y',
    String(options.height),
    // The pane stays after the program ends, so its screen and exit status can be read.
    ...command,
  );
  await tmux('set-option', '-t', session, 'remain-on-exit', 'on');
  const capture = async (...from: string[]) =>
    (await tmux('capture-pane', '-p', ...from, '-t', session))
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n')
      .trimEnd();
  const screen = () => capture();
  return {
    async send(...keys) {
      for (const key of keys) {
        if (KEY_NAMES.test(key)) await tmux('send-keys', '-t', session, key);
        else await tmux('send-keys', '-t', session, '-l', key);
      }
    },
    screen,
    scrollback: () => capture('-S', '-'),
    async waitFor(pattern, timeoutMs = 20_000) {
      const matches = async (text: string) =>
        pattern instanceof RegExp ? pattern.test(text) : await pattern(text);
      const end = Date.now() + timeoutMs;
      let text = await screen();
      while (!(await matches(text))) {
        if (Date.now() > end) throw new Error(`the screen never matched ${String(pattern)}:\n${text}`);
        await sleep(100);
        text = await screen();
      }
      return text;
    },
    async close() {
      await tmux('kill-server').catch(() => undefined);
    },
  };
}
