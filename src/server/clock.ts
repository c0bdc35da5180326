/** The server's notion of "now" in epoch milliseconds; tests inject one they can move forward. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();

export function isoAt(clock: Clock): string {
  return new Date(clock()).toISOString();
}
