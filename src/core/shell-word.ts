// A word of a command line gds prints for the person to run (the next page's `records list --cursor …`, a
// `gds tokens issue …` to renew a profile): as it is when the shell reads it as it is, else in single
// quotes. Values from the service go into such lines, and a cursor or an id holding `;`, `$(…)` or a
// space must not become another command when the line is pasted.
export function shellWord(value: string): string {
  // not at the start, `=`: zsh reads `=ls` as the path of ls
  return /^[\w.:,@/%+-][\w.:,@/%+=-]*$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
