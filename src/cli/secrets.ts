// A token is never printed whole: errors that echo user input pass through redactSecrets first.

/** `cli_abcdef…` -> `cli_…****`: enough to recognise which token, never enough to use it. */
export function maskToken(token: string): string {
  const prefix = /^[a-z]+_/i.exec(token)?.[0] ?? '';
  return `${prefix}…****`;
}

export function redactSecrets(text: string, secrets: ReadonlyArray<string | undefined>): string {
  let redacted = text;
  for (const secret of secrets) {
    if (secret === undefined || secret.length < 4) continue;
    redacted = redacted.split(secret).join(maskToken(secret));
  }
  return redacted;
}
