// `--jq EXPR` over the records a command prints: a filter of the subset gds answers itself (jq-subset.ts) is
// applied at once; any other runs through jq (jq.ts; jq compiled to WebAssembly, loaded only then), the
// records given meanwhile queued behind the run so that they come out in order. Either way strings come out
// raw and other values as compact JSON with what a terminal acts on as `\u` escapes; Output strips the raw
// strings on a terminal.
import { compileSimpleFilter, type SimpleFilter } from './jq-subset.js';
import { runJqOver } from './jq.js';

export class JqFilter {
  /** Records on their way through jq, written in order; `flush()` waits for them. */
  private queue: Promise<void> = Promise.resolve();
  /** Records given to `take()` that no jq run has taken yet. */
  private readonly pending: string[] = [];
  private failure: unknown;
  /** The filter when gds evaluates it without jq (jq-subset.ts), else undefined. */
  private readonly simple: SimpleFilter | undefined;
  /** jq runs queued and not yet ended: records meanwhile queue behind them, to stay in order. */
  private runs = 0;

  /** `write` is given the filter's output for one or more records, without a final line break (not stripped). */
  constructor(
    private readonly filter: string,
    private readonly write: (text: string) => void,
  ) {
    this.simple = compileSimpleFilter(filter);
  }

  /** Whether the filter is one gds evaluates itself (jq-subset.ts): jq need not check it first. */
  get isSimple(): boolean {
    return this.simple !== undefined;
  }

  /** One record, as its NDJSON line. */
  take(line: string): void {
    // A filter of the subset gds answers itself, when no jq run is still ahead of this record.
    if (this.simple !== undefined && this.runs === 0 && this.failure === undefined) {
      const answer = this.simple(line);
      if (answer !== undefined) {
        if (answer.length > 0) this.write(answer.join('\n'));
        return;
      }
    }
    // The records given meanwhile wait for the one jq run that takes them all (see runJqOver), in order.
    // The chain never rejects: the first failure is kept for flush(), and the records after it are dropped.
    this.pending.push(line);
    if (this.pending.length > 1) return;
    this.runs += 1;
    this.queue = this.queue.then(async () => {
      try {
        const lines = this.pending.splice(0);
        if (this.failure !== undefined) return;
        const { text, failure } = await runJqOver(lines, this.filter);
        if (text !== '') this.write(text);
        if (failure !== undefined) this.failure = failure;
      } catch (error) {
        this.failure = error;
      } finally {
        this.runs -= 1;
      }
    });
  }

  /** Waits until every record taken is written; throws jq's failure. */
  async flush(): Promise<void> {
    await this.queue;
    if (this.failure !== undefined) throw this.failure;
  }
}
