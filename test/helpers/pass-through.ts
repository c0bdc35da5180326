// The heart of a reverse proxy in a test: a request passed on to the upstream with every header (`Host` set to
// the upstream's, as nginx's default `proxy_pass` does) and its body streamed, the answer streamed back whole.
import { request as upstreamRequest } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

export function passThrough(
  upstream: string,
  request: IncomingMessage,
  response: ServerResponse,
  options: { path?: string; onError?: () => void } = {},
): void {
  const target = new URL(upstream);
  const onward = upstreamRequest(
    {
      host: target.hostname,
      port: target.port,
      method: request.method,
      path: options.path ?? request.url,
      headers: { ...request.headers, host: target.host },
    },
    (answer) => {
      response.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(response);
    },
  );
  onward.on('error', options.onError ?? (() => response.writeHead(502).end()));
  request.pipe(onward);
}
