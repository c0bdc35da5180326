// A loopback proxy before the test server that stands for a service killed around a recertification signal
// (POST /api/workspace/recertify), or around another keyed request `watches` names (a gate submission): it
// forwards every request, and for each watched one asks the test whether the service is gone (the connection is
// dropped before the request reaches it) and, once the service answered, whether gds hears the answer (if not,
// the service applied the request and the connection is dropped).
//
//   const proxy = await signalProxy(server.url, { gone: () => down, heard: (answer) => !cut });
//   const submissions = await signalProxy(server.url, {
//     watches: (method, path) => method === 'POST' && path.endsWith('/gate-submissions'),
//     gone: () => false,
//     heard: (answer, request) => keys.push(request.headers['idempotency-key']) > 1,
//   });
//   ... SERVICE_API_URL: proxy.url ...
//   await proxy.close();
import { request as httpRequest, createServer } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SignalProxy {
  /** The proxy's origin: the test server's stage path is added to each request it forwards. */
  url: string;
  close(): Promise<void>;
}

export async function signalProxy(
  target: string,
  rules: {
    gone: () => boolean;
    heard: (answer: IncomingMessage, request: IncomingMessage) => boolean;
    /** The requests watched, by method and path (query left out); by default the recertification signal. */
    watches?: (method: string, path: string) => boolean;
  },
): Promise<SignalProxy> {
  const base = new URL(target);
  const watches =
    rules.watches ?? ((method, path) => method === 'POST' && path === '/api/workspace/recertify');
  const proxy = createServer((req, res) => {
    const isSignal = watches(req.method ?? 'GET', (req.url ?? '/').split('?')[0] ?? '/');
    if (isSignal && rules.gone()) {
      req.socket.destroy();
      return;
    }
    const upstream = httpRequest(
      {
        host: base.hostname,
        port: base.port,
        method: req.method,
        // The REST door's stage (the server URL's path) before the path the client sent.
        path: `${base.pathname.replace(/\/$/, '')}${req.url ?? ''}`,
        headers: { ...req.headers, host: base.host },
      },
      (answer) => {
        if (isSignal && !rules.heard(answer, req)) {
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
}
