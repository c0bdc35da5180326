// Gate work on the embedded database (PGlite) waits its turn in a bounded queue. A gate run copies the
// rows it checks out of the service's one connection and checks them in a sandbox (gates/snapshot.ts);
// several at once each held a copy and queued their statements before every other request's, so reads
// waited past a client's 30 s. Here at most `slots` run at once (db/pglite.ts: one more than its sandboxes,
// so the next copies while the others check); up to `depth` more wait;
// a request's work that cannot start within `startDeadlineMs`, or finds the queue full, is refused at once
// with 503 `server_busy` and a `Retry-After` from how long gate work has been taking (gds waits it out, as
// for a 429). Background work (a detached Gate 2/3 job) waits without a deadline.
import { HttpError } from '../errors.js';

export interface GateQueueOptions {
  /** Gate works running at once. */
  slots: number;
  /** Requests' gate works waiting at most; one more is refused. */
  depth: number;
  /** How long a request's gate work may wait to start. */
  startDeadlineMs: number;
}

export class ServerBusyError extends HttpError {
  constructor(running: number, waiting: number, retryAfterSeconds: number, why: string) {
    super(
      503,
      'server_busy',
      `The embedded database (PGlite) is running ${running} gate check${running === 1 ? '' : 's'} with ${waiting} waiting: ${why}. Nothing was done; send it again after ${retryAfterSeconds} s (gds does), or start the server with --database-url to use PostgreSQL.`,
      { running, waiting, retryAfterSeconds },
      { 'retry-after': String(retryAfterSeconds) },
    );
  }
}

interface Waiter {
  start(): void;
}

export class GateQueue {
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /** Requests' waiters (the ones the depth bounds). */
  private waitingRequests = 0;
  /** A running average of how long one gate work took, for Retry-After. */
  private averageMs = 5_000;

  constructor(private readonly options: GateQueueOptions) {}

  /** Runs `work` when a slot is free; `background` work waits however long and is never refused. */
  async run<T>(work: () => Promise<T>, background = false): Promise<T> {
    if (this.running >= this.options.slots || this.waiting.length > 0) await this.turn(background);
    else this.running += 1;
    const started = performance.now();
    try {
      return await work();
    } finally {
      this.averageMs = 0.7 * this.averageMs + 0.3 * (performance.now() - started);
      const next = this.waiting.shift();
      if (next) next.start();
      else this.running -= 1;
    }
  }

  /** Seconds until a slot is likely free for one more waiter: the average work over the slots, per waiter ahead. */
  private retryAfter(): number {
    const ahead = this.waiting.length + this.running;
    const seconds = Math.ceil((this.averageMs * Math.max(1, ahead)) / this.options.slots / 1000);
    return Math.min(60, Math.max(1, seconds));
  }

  private turn(background: boolean): Promise<void> {
    if (!background && this.waitingRequests >= this.options.depth) {
      throw new ServerBusyError(
        this.running,
        this.waiting.length,
        this.retryAfter(),
        `its queue of ${this.options.depth} is full`,
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(deadline);
          if (!background) this.waitingRequests -= 1;
          resolve(); // the slot passes from the work that ended to this one: `running` stays the same
        },
      };
      this.waiting.push(waiter);
      if (!background) this.waitingRequests += 1;
      const deadline = background
        ? undefined
        : setTimeout(() => {
            const at = this.waiting.indexOf(waiter);
            if (at === -1) return;
            this.waiting.splice(at, 1);
            this.waitingRequests -= 1;
            const seconds = this.options.startDeadlineMs / 1000;
            reject(
              new ServerBusyError(
                this.running,
                this.waiting.length,
                this.retryAfter(),
                `this check could not start within ${seconds} s`,
              ),
            );
          }, this.options.startDeadlineMs);
      deadline?.unref();
    });
  }
}
