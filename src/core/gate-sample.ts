// The bounds of a Gate 1 sample (`gate run --sample`): gds checks them before it sends, the service again.

/** The most rows a sample reads: N of head:N, tail:N, random:N, chunks:K@N. */
export const MAX_SAMPLE_ROWS = 1_000_000;
/** The most runs of chunks:K@N (K). */
export const MAX_CHUNKS = 1000;
