// The requests a server is still handling, so that closing it waits for them before the database closes.
// Fastify's close() waits for open connections only: a request whose client went away (a CLI that ended on
// the first of two answers, a killed script) is still being handled, and its next statement on a closed
// database answered 500 and left its work half-done.

/** How long closing waits for the requests still being handled: longer than any statement's deadline. */
const SETTLE_LIMIT_MS = 60_000;

export class RequestsInFlight {
  private readonly pending = new Set<object>();
  private readonly waiting: Array<() => void> = [];

  /** A request has begun (its first hook). */
  begin(request: object): void {
    this.pending.add(request);
  }

  /** A request has its answer (its onSend, or a hijacked route's end); again or unknown is a no-op. */
  end(request: object): void {
    if (!this.pending.delete(request) || this.pending.size > 0) return;
    for (const settle of this.waiting.splice(0)) settle();
  }

  /** Resolves once no request is being handled, or after SETTLE_LIMIT_MS (a handler that never ends). */
  settled(): Promise<void> {
    if (this.pending.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, SETTLE_LIMIT_MS);
      timer.unref();
      this.waiting.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
