// A loopback port nothing listens on: a connection to it is refused at once (a service or a proxy that is down).
import { createServer } from 'node:net';

export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
