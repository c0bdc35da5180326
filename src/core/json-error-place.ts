// Where a text stops being JSON, for the errors of V8's JSON.parse that say no place: an unexpected token
// (`Unexpected token 'l'`, with the file's text around it, which gds does not pass on) and the end of the text.
// A person fixing a settings.json of 300 lines by hand needs the line. V8 stays the judge of what is JSON:
// this only walks to the first character it cannot take.

/** The line and column (from 1, as V8's own) of the first character that makes `text` no JSON. */
export function jsonErrorPlace(text: string): { line: number; column: number } {
  const before = text.slice(0, firstOffending(text)).split('\n');
  return { line: before.length, column: (before.at(-1)?.length ?? 0) + 1 };
}

class Offending {
  constructor(readonly offset: number) {}
}

function firstOffending(text: string): number {
  let i = 0;
  const stop = (): never => {
    throw new Offending(i);
  };
  const space = () => {
    while (i < text.length && ' \t\n\r'.includes(text.charAt(i))) i++;
  };
  const take = (char: string) => {
    if (text.charAt(i) !== char) stop();
    i++;
  };
  const string = () => {
    take('"');
    while (text.charAt(i) !== '"') {
      if (i >= text.length) stop();
      i += text.charAt(i) === '\\' ? 2 : 1;
    }
    i++;
  };
  const items = (close: string, item: () => void) => {
    space();
    if (text.charAt(i) === close) return void i++;
    for (;;) {
      item();
      space();
      if (text.charAt(i) !== ',') return take(close);
      i++;
    }
  };
  const member = () => {
    space();
    string();
    space();
    take(':');
    value();
  };
  const value = (): void => {
    space();
    const start = text.charAt(i);
    if (start === '{' || start === '[') {
      i++;
      return start === '{' ? items('}', member) : items(']', value);
    }
    if (start === '"') return string();
    const literal = ['true', 'false', 'null'].find((word) => start !== '' && word.startsWith(start));
    if (literal !== undefined) {
      for (const char of literal) take(char);
      return;
    }
    const number = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
    number.lastIndex = i;
    if (!number.test(text)) stop();
    i = number.lastIndex;
  };
  try {
    value();
    space();
    return i;
  } catch (error) {
    if (error instanceof Offending) return error.offset;
    throw error;
  }
}
