// Ctrl-C (SIGINT) or SIGTERM in the middle of a token refresh would lose the only copy of the new
// tokens: the service has spent the old refresh token, and gds dies before saving the new one. While a
// refresh runs, these signals are held: the refresh finishes and saves (for at most SAVE_BOUND_MS), then
// the signal takes effect as it would have (the command's own Ctrl-C handler, else exit 130 or 143).
// A second signal, or the bound, ends the wait at once; an unfinished refresh is completed by the next run
// (refresh.ts records it before calling).

const HELD_SIGNALS = ['SIGINT', 'SIGTERM'] as const;
type HeldSignal = (typeof HELD_SIGNALS)[number];
const EXIT_CODES: Record<HeldSignal, number> = { SIGINT: 130, SIGTERM: 143 };

/** The longest a held signal waits for the refresh to end. */
export const SAVE_BOUND_MS = 2_000;

type Listener = (...args: unknown[]) => void;

export async function finishBeforeExit<T>(work: () => Promise<T>, boundMs = SAVE_BOUND_MS): Promise<T> {
  const previous = new Map(
    HELD_SIGNALS.map((signal) => [signal, process.rawListeners(signal) as Listener[]]),
  );
  let caught: HeldSignal | undefined;
  let timer: NodeJS.Timeout | undefined;
  let restored = false;

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
    restore();
    // Ctrl-C goes to the command's own handler (it says "Interrupted" and exits 130). Not SIGTERM: its
    // only listener may be signal-exit's (proper-lockfile), which would kill the process by the signal
    // again instead of letting it exit 143.
    if (signal === 'SIGINT' && process.listenerCount(signal) > 0) process.emit(signal, signal);
    process.exit(EXIT_CODES[signal]);
  };
  function hold(signal: HeldSignal) {
    if (caught !== undefined) deliver(caught);
    caught = signal;
    timer = setTimeout(() => deliver(signal), boundMs);
  }

  for (const signal of HELD_SIGNALS) {
    process.removeAllListeners(signal);
    process.on(signal, hold);
  }
  try {
    return await work();
  } finally {
    if (caught === undefined) restore();
    else deliver(caught);
  }
}
