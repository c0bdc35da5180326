// A loopback proxy in front of the test server that holds the first request matching `holds` until `meanwhile`
// is done, then forwards it: what another writer does between two of gds's requests (between a plan's reads,
// or between apply's plan and its writes), made deterministic without sleeping. With `hold: 'answer'` the
// request is forwarded first and its answer held instead: what happens after the service wrote and before gds
// learned it (gds killed there, say). With `answer`, a request it returns an answer for is answered by the
// proxy (after `meanwhile`, when held) and not forwarded: a service that answers otherwise than the test server.
//
//   const proxy = await holdingProxy(server.url, {
//     holds: (method, path) => method === 'POST' && path.endsWith('/api/artifacts/batch'),
//     meanwhile: async () => { /* another writer */ },
//   });
//   await gds([...], { SERVICE_API_URL: proxy.url });
//   await proxy.close();                      // rethrows what `meanwhile` threw
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';

export interface HoldingProxy {
  /** The test server's base URL (its stage path included) through the proxy. */
  url: string;
  /** Whether a request was held (and `meanwhile` run). */
  held(): boolean;
  /** Stops the proxy; fails with what `meanwhile` threw, if it threw. */
  close(): Promise<void>;
}

export async function holdingProxy(
  target: string,
  options: {
    holds: (method: string, path: string) => boolean;
    meanwhile: () => Promise<void>;
    hold?: 'request' | 'answer';
    /** The proxy's own answer to a request (its JSON body), which is then not forwarded; undefined forwards it. */
    answer?: (method: string, path: string, body: Buffer) => { status: number; body: unknown } | undefined;
  },
): Promise<HoldingProxy> {
  const base = new URL(target);
  let ran: Promise<void> | undefined;
  const server = createServer((request, response) => {
    void (async () => {
      const chunks: Buffer[] = [];
      for await (const chunk of request) chunks.push(chunk as Buffer);
      const method = request.method ?? 'GET';
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      const held = ran === undefined && options.holds(method, path);
      const runMeanwhile = async () => {
        ran = options.meanwhile();
        await ran.catch(() => undefined);
      };
      if (held && options.hold !== 'answer') await runMeanwhile();
      const own = options.answer?.(method, path, Buffer.concat(chunks));
      if (own !== undefined) {
        response.writeHead(own.status, { 'content-type': 'application/json' }).end(JSON.stringify(own.body));
        return;
      }
      const answer = await fetch(`${base.origin}${request.url ?? '/'}`, {
        method,
        headers: forwarded(request.headers),
        ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }),
      });
      const body = Buffer.from(await answer.arrayBuffer());
      if (held && options.hold === 'answer') await runMeanwhile();
      const headers: Record<string, string> = {};
      answer.headers.forEach((value, name) => {
        if (!['content-encoding', 'transfer-encoding', 'content-length'].includes(name))
          headers[name] = value;
      });
      response.writeHead(answer.status, headers).end(body);
    })().catch((error: unknown) => response.destroy(error as Error));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}${base.pathname.replace(/\/$/, '')}`,
    held: () => ran !== undefined,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await ran;
    },
  };
}

function forwarded(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers))
    if (typeof value === 'string' && name !== 'host' && name !== 'content-length') kept[name] = value;
  return kept;
}
