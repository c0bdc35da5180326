// A hook that holds whoever calls it where it stands until the test lets it go: a test injects `hook` at one
// moment of the code under test (a keychain read or write, a request), waits for `reached`, acts as another
// process would at that moment, then calls `go()`.

/** A hook that says when it is reached and holds its caller there until `go()`. */
export function gate() {
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => (reach = resolve));
  let release: () => void = () => undefined;
  return {
    reached,
    hook: () => {
      reach();
      return new Promise<void>((resolve) => (release = resolve));
    },
    go: () => release(),
  };
}
