// Ctrl-C (SIGINT) or SIGTERM in the middle of a token refresh would lose the only copy of the new
// tokens: the service has spent the old refresh token, and gds dies before saving the new one (and in the
// middle of `tokens issue --save-profile`, leave a live token nobody is told of). While a refresh or an
// issue runs, these signals are held: the request finishes (for at most SAVE_BOUND_MS) and saves (for at
// most the bound it gives when its save starts: a keychain write's limit and more), then
// the signal takes effect as it would have (the command's own Ctrl-C handler, else exit 130 or 143).
// A second signal, or the bound, ends the wait at once; an unfinished refresh is completed by the next run
// (refresh.ts records it before calling). A save that waits for another gds's hold on the profile
// (GDS_LOCK_WAIT_MS, longer than the bound) stops waiting at the signal, and the tokens are shown instead
// (a refresh's) or the token to revoke is named (an issue's); one that starts with the signal already held waits
// as any save does, within the bound (config.ts's acquireWithin). A request still unanswered when the bound ends
// is said as such before the exit (the service may have issued or spent a token gds never heard of); a save
// that did finish is said, as without the signal, before the exit, and the exit says no "Interrupted." error
// after it (the outcome stands); one cut short (a second signal, or the bound) is said unfinished, its tokens
// shown (a refresh's) or named (an issue's).

import type { CliError } from '../core/errors.js';
import { debugLog } from './debug-log.js';

const HELD_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type HeldSignal = (typeof HELD_SIGNALS)[number];
const EXIT_CODES: Record<HeldSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/**
 * The exit code of a failure `work` met while a signal was held (HeldWorkSay.failure's answer): its own when it is
 * none of the signal's doing (a refusal of the service, a profile changed meanwhile), else the signal's (undefined).
 */
export function heldFailureExit(failure: CliError): number | undefined {
  return failure.code === 'interrupted' ? undefined : failure.exitCode;
}

/** The longest a held signal waits for the refresh to end. */
export const SAVE_BOUND_MS = 2_000;

type Listener = (...args: unknown[]) => void;

/** What `work` says of the answer it was saving when the wait ends before the save did (see finishBeforeExit). */
type SaveCut = (signal: NodeJS.Signals) => void;

/** What finishBeforeExit says, before gds exits by a held signal, of the work it held the signal for. */
export interface HeldWorkSay<T> {
  /**
   * What `work` failed with (that failure is the interruption's message). Returns the exit code gds then ends with
   * when the failure is none of the signal's doing (a refusal of the service): else the signal's (130, 143).
   */
  failure?: (error: unknown) => number | undefined | void;
  /** `work` had not said it was saving when the wait ended: its request was still out, its answer unknown. */
  unanswered?: (signal: NodeJS.Signals) => void;
  /**
   * What `work` did: it finished (saved, or showed its answer) before the exit, and that is the command's outcome.
   * Given, the exit follows it without the command's own Ctrl-C handler, whose "Interrupted." (an error line
   * under --json) would contradict it: `done` says the interruption itself, if at all, as a notice.
   */
  done?: (result: T, signal: NodeJS.Signals) => void;
  /**
   * Settles once what was said is written: records still going through a --jq filter jq runs are written later,
   * and an exit before would lose them (a refresh's new tokens, the only copy). The exit waits for it.
   */
  written?: () => Promise<void>;
}

/**
 * Runs `work` with SIGINT and SIGTERM held (see above). `work` calls `saving(ms)` when it has the new tokens
 * and starts saving them (`cut`: what it says of them should the wait end before the save does, the bound or a
 * second signal): a held signal then waits `ms` more for the save, however long the answer took, as
 * a save may wait out a keychain that does not answer (GDS_KEYCHAIN_TIMEOUT_MS) before it falls back to the
 * file; a bound shorter than that would end gds before that fallback, and lose the tokens. `interrupted` is
 * aborted (its reason: the signal's name) when a signal is held: a wait longer than the bound (another gds's
 * lock on the profile) ends then, and `work` shows the tokens it could not save instead. `say` says what became
 * of `work` after a signal came (HeldWorkSay), before the exit.
 */
export async function finishBeforeExit<T>(
  work: (saving: (ms: number, cut?: SaveCut) => void, interrupted: AbortSignal) => Promise<T>,
  boundMs = SAVE_BOUND_MS,
  say: HeldWorkSay<T> = {},
): Promise<T> {
  const previous = new Map(
    HELD_SIGNALS.map((signal) => [signal, process.rawListeners(signal) as Listener[]]),
  );
  let caught: HeldSignal | undefined;
  let timer: NodeJS.Timeout | undefined;
  let restored = false;
  let saveBoundMs: number | undefined;
  let saveCut: SaveCut | undefined;
  // What became of `work` was said (its failure, its cut, or its outcome): the command's handler says nothing more.
  let said = false;
  let settled = false;
  // The exit is under way (waiting for `say.written`): nothing more is said, and it happens once.
  let exiting = false;
  // The exit code of a failure of `work` that is none of the signal's doing (HeldWorkSay.failure).
  let failureExit: number | undefined;
  const interrupted = new AbortController();

  const restore = () => {
    if (restored) return;
    restored = true;
    clearTimeout(timer);
    for (const signal of HELD_SIGNALS) {
      process.removeListener(signal, hold);
      for (const listener of previous.get(signal) ?? []) process.on(signal, listener);
    }
  };
  const deliver = (signal: HeldSignal) => {
    if (exiting) return;
    exiting = true;
    restore();
    // The wait ended (the bound, or a second signal) before `work` did: what it says of its request, or its save.
    const cut = settled ? undefined : saveBoundMs === undefined ? say.unanswered : saveCut;
    if (cut !== undefined) {
      cut(signal);
      said = true;
    }
    // Ctrl-C goes to the command's own handler (it says "Interrupted" and exits 130). Not SIGTERM: its
    // only listener may be signal-exit's (proper-lockfile), which would kill the process by the signal
    // again instead of letting it exit 143.
    // Not when what became of `work` was said: a failure is the interruption's message (the handler would say
    // "Interrupted" again), an outcome stands (an "Interrupted." error after it would deny it).
    const exit = () => {
      if (signal === 'SIGINT' && !said && process.listenerCount(signal) > 0) process.emit(signal, signal);
      process.exit(failureExit ?? EXIT_CODES[signal]);
    };
    if (say.written === undefined) exit();
    else void say.written().then(exit, exit);
  };
  function hold(signal: HeldSignal) {
    if (caught !== undefined) deliver(caught);
    caught = signal;
    debugLog(`${signal} held: the new tokens are saved first`);
    timer = setTimeout(() => deliver(signal), saveBoundMs ?? boundMs);
    interrupted.abort(signal);
  }
  const saving = (ms: number, cut?: SaveCut) => {
    saveBoundMs = ms;
    saveCut = cut;
    const held = caught;
    if (held === undefined || restored) return;
    clearTimeout(timer);
    timer = setTimeout(() => deliver(held), ms);
  };

  for (const signal of HELD_SIGNALS) {
    process.removeAllListeners(signal);
    process.on(signal, hold);
  }
  try {
    const result = await work(saving, interrupted.signal);
    settled = true;
    if (caught !== undefined && say.done !== undefined && !exiting) {
      say.done(result, caught);
      said = true;
    }
    return result;
  } catch (error) {
    settled = true;
    if (caught !== undefined && say.failure !== undefined && !exiting) {
      failureExit = say.failure(error) ?? undefined;
      said = true;
    }
    throw error;
  } finally {
    if (caught === undefined) restore();
    else {
      deliver(caught);
      // gds exits once what was said is written (deliver): the command goes no further meanwhile.
      await new Promise<never>(() => undefined);
    }
  }
}
