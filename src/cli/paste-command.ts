import { shellWord } from '../core/shell-word.js';

/** The global flags a person gave that a printed command needs to run as theirs did. */
export interface GivenGlobals {
  profile?: string | undefined;
  base?: string | undefined;
  token?: string | undefined;
}

/**
 * A command line gds prints for the person to paste (a next page, a next step): `words` are already shell
 * words; the profile and base URL they chose are added, so that the pasted line talks to the same service
 * with the same credentials. A token is never printed: the line says to add it.
 */
export function pasteCommand(bin: string, words: readonly string[], given: GivenGlobals): string {
  const line = [
    bin,
    ...words,
    ...(given.profile === undefined ? [] : ['--profile', shellWord(given.profile)]),
    ...(given.base === undefined ? [] : ['--base', shellWord(given.base)]),
  ].join(' ');
  return given.token === undefined ? line : `${line} (add --token …: gds does not print tokens)`;
}
