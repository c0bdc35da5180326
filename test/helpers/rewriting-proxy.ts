// A proxy in front of a test server that passes each answer's body through `rewrite` (a hostile service's
// strings, say), unless `intercept` answers the request itself (an error of its own, a gateway's cut).
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RewritingProxyOptions {
  /** The body to send on; `type` is the answer's Content-Type ('' when it has none). */
  rewrite: (text: string, type: string) => string;
  /** Answers `request` and returns true, or returns false to forward it. Called once its body has arrived. */
  intercept?: (request: IncomingMessage, response: ServerResponse) => boolean;
}

export interface RewritingProxy {
  /** The proxy's address with the target's path: where SERVICE_API_URL points. */
  url: string;
  close(): Promise<void>;
}

export async function startRewritingProxy(
  target: string,
  options: RewritingProxyOptions,
): Promise<RewritingProxy> {
  const { origin, pathname } = new URL(target);
  const forward = async (body: Buffer, request: IncomingMessage) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(request.headers)) {
      if (typeof value === 'string' && !['host', 'content-length', 'accept-encoding'].includes(name))
        headers[name] = value;
    }
    const answered = await fetch(`${origin}${request.url ?? '/'}`, {
      method: request.method ?? 'GET',
      headers,
      ...(body.length > 0 ? { body } : {}),
    });
    const type = answered.headers.get('content-type') ?? '';
    return { status: answered.status, type, out: options.rewrite(await answered.text(), type) };
  };
  const proxy = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (options.intercept?.(request, response) === true) return;
      forward(Buffer.concat(chunks), request).then(
        ({ status, type, out }) => {
          response.statusCode = status;
          if (type !== '') response.setHeader('Content-Type', type);
          response.end(out);
        },
        () => response.writeHead(502).end(),
      );
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}${pathname}`,
    close: async () => {
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
    },
  };
}
