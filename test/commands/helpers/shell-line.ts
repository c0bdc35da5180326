// A command line as a shell reads it, far enough to find the commands it runs: words (quotes, backslashes),
// comments, the operators that separate commands (`|`, `||`, `&&`, `;`, `&`, parentheses), redirections
// (`> file`, `2>&1`, `< file`, `<<< text`: the word after one is no argument) and command substitutions
// (`$(…)`, in double quotes too: their commands are read as well). Variables are left as written ("$GID"
// is the word $GID). For the examples of gds's help and docs (help-examples.test.ts).
//
//   shellCommands('GID=$(SERVICE_TOKEN=$T gds definitions push a.sql) && echo "$GID"')
//   // [{ words: ['echo', '$GID'], env: {} },
//   //  { words: ['gds', 'definitions', 'push', 'a.sql'], env: { SERVICE_TOKEN: '$T' } }]

/** One simple command: its words, the variables assigned before it, and what it reads on stdin when known. */
export interface ShellCommand {
  words: string[];
  env: Record<string, string>;
  /** What an `echo '…' |` or `printf '…' |` (or `<<< '…'`) before it gives it, as text. */
  stdin?: string;
  /** The command whose output it reads: the one before it in a pipeline. */
  pipedFrom?: ShellCommand;
}

type Token = { word: string } | { op: string };

const SEPARATORS = new Set(['|', '||', '&&', ';', '&', '(', ')']);
const REDIRECTIONS = new Set(['>', '>>', '>&', '&>', '<', '<<', '<<<', '>|']);
const OPERATOR = /^(?:<<<|<<|>>|>&|>\||&>|&&|\|\||[|;&()<>])/;

/** The simple commands of `line`, in order, then those of its command substitutions. Throws on a broken line. */
export function shellCommands(line: string): ShellCommand[] {
  const nested: string[] = [];
  const commands = commandsOf(tokenize(line, nested));
  return [...commands, ...nested.flatMap((inner) => shellCommands(inner))];
}

function tokenize(text: string, nested: string[]): Token[] {
  const tokens: Token[] = [];
  let word: string | undefined;
  const endWord = () => {
    if (word !== undefined) tokens.push({ word });
    word = undefined;
  };
  let i = 0;
  while (i < text.length) {
    const char = text[i] ?? '';
    if (/\s/.test(char)) {
      endWord();
      i += 1;
    } else if (char === '#' && word === undefined) {
      break;
    } else if (char === '\\') {
      word = `${word ?? ''}${text[i + 1] ?? ''}`;
      i += 2;
    } else if (char === "'") {
      const close = text.indexOf("'", i + 1);
      if (close === -1) throw new Error(`unclosed ' in: ${text}`);
      word = `${word ?? ''}${text.slice(i + 1, close)}`;
      i = close + 1;
    } else if (char === '"') {
      const read = doubleQuoted(text, i + 1, nested);
      word = `${word ?? ''}${read.text}`;
      i = read.end + 1;
    } else if (text.startsWith('$(', i)) {
      const close = substitutionEnd(text, i + 2);
      nested.push(text.slice(i + 2, close));
      word = `${word ?? ''}${text.slice(i, close + 1)}`;
      i = close + 1;
    } else if (OPERATOR.test(text.slice(i))) {
      const op = OPERATOR.exec(text.slice(i))?.[0] ?? char;
      // `2>` and `2>&1`: the digits name a file descriptor, not an argument.
      if (/^[<>]/.test(op) && word !== undefined && /^\d+$/.test(word)) word = undefined;
      endWord();
      tokens.push({ op });
      i += op.length;
    } else {
      word = `${word ?? ''}${char}`;
      i += 1;
    }
  }
  endWord();
  return tokens;
}

/** A "…" word from `start` (after the quote): its text, and where the closing quote is. */
function doubleQuoted(text: string, start: number, nested: string[]): { text: string; end: number } {
  let read = '';
  let i = start;
  while (i < text.length) {
    const char = text[i] ?? '';
    if (char === '"') return { text: read, end: i };
    if (char === '\\' && ['"', '\\', '$', '`'].includes(text[i + 1] ?? '')) {
      read += text[i + 1] ?? '';
      i += 2;
    } else if (text.startsWith('$(', i)) {
      const close = substitutionEnd(text, i + 2);
      nested.push(text.slice(i + 2, close));
      read += text.slice(i, close + 1);
      i = close + 1;
    } else {
      read += char;
      i += 1;
    }
  }
  throw new Error(`unclosed " in: ${text}`);
}

/** Where the `)` closing a `$(` whose text starts at `start` is (quotes and nested parentheses skipped). */
function substitutionEnd(text: string, start: number): number {
  let depth = 1;
  let quote: string | undefined;
  for (let i = start; i < text.length; i += 1) {
    const char = text[i] ?? '';
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"') i += 1;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '\\') i += 1;
    else if (char === '(') depth += 1;
    else if (char === ')' && --depth === 0) return i;
  }
  throw new Error(`unclosed $( in: ${text}`);
}

function commandsOf(tokens: readonly Token[]): ShellCommand[] {
  const commands: ShellCommand[] = [];
  let current: ShellCommand = { words: [], env: {} };
  let pipedText: string | undefined;
  const endCommand = (separator: string) => {
    const ended = current;
    if (ended.words.length > 0) commands.push(ended);
    pipedText = separator === '|' ? printedText(ended.words) : undefined;
    current = { words: [], env: {} };
    if (pipedText !== undefined) current.stdin = pipedText;
    if (separator === '|' && ended.words.length > 0) current.pipedFrom = ended;
  };
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i] ?? { word: '' };
    if ('word' in token) {
      const assignment = /^([A-Za-z_]\w*)=(.*)$/s.exec(token.word);
      if (current.words.length === 0 && assignment !== null)
        current.env[assignment[1] ?? ''] = assignment[2] ?? '';
      else current.words.push(token.word);
    } else if (REDIRECTIONS.has(token.op)) {
      const target = tokens[i + 1];
      if (target === undefined || !('word' in target)) throw new Error(`${token.op} without a target`);
      if (token.op === '<<<') current.stdin = `${target.word}\n`;
      else if (token.op === '<') delete current.stdin;
      i += 1;
    } else if (SEPARATORS.has(token.op)) {
      endCommand(token.op);
    } else throw new Error(`unexpected ${token.op}`);
  }
  endCommand(';');
  return commands;
}

/** What `echo …` or `printf FORMAT …` prints, when its words say it all; else undefined. */
function printedText(words: readonly string[]): string | undefined {
  const [program, ...args] = words;
  if (program === 'echo') return `${args.join(' ')}\n`;
  if (program !== 'printf' || args[0] === undefined) return undefined;
  if (args[0] === '%s') return args.slice(1).join('');
  if (args[0].includes('%') || args.length > 1) return undefined;
  return args[0].replaceAll('\\n', '\n').replaceAll('\\t', '\t');
}
