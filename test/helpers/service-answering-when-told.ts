// A stand-in service that holds the first request until the test says: for tests that act (a signal sent, a lock
// taken) while a gds request is out, then let the answer go.
import { createServer } from 'node:http';

/**
 * Answers `body` with `status` to every request, once `answer()` is called; `requested` settles when the first came.
 * `cleanup` gets what closes it.
 */
export async function serviceAnsweringWhenTold(
  body: unknown,
  cleanup: (() => Promise<void>)[],
  status = 200,
) {
  let asked!: () => void;
  const requested = new Promise<void>((resolve) => (asked = resolve));
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => (answer = resolve));
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      asked();
      void answered.then(() =>
        response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body)),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  cleanup.push(async () => {
    answer();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { url: `http://127.0.0.1:${port}`, requested, answer };
}
