// Small measuring helpers shared by the bench modules (this folder is not itself a bench module).

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** The median wall time of `rounds` sequential calls of `fn`, in milliseconds. */
export async function medianMs(rounds: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return median(times);
}
