// GDS_DEBUG=1: what the credential store waits on (keychain calls, the profile lock) on stderr, as the
// client logs each request and answer. No secret ever goes into a line.

export function debugLog(line: string): void {
  if (process.env.GDS_DEBUG === '1') process.stderr.write(`gds: ${line}\n`);
}
