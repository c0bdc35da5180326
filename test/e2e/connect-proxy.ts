// A loopback HTTP proxy for the proxy tests: it records every request and CONNECT (and the credentials each
// CONNECT came with), answers plain requests 502, and tunnels a CONNECT to its target, `serviceHost` going to 127.0.0.1 (a name only it resolves).
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import { connect } from 'node:net';

export const serviceHost = 'service.gds.test';

export function connectProxy(): { proxy: Server; connects: string[]; credentials: string[] } {
  const connects: string[] = [];
  /** The Proxy-Authorization of each CONNECT, decoded (`user:password`); '' for none. */
  const credentials: string[] = [];
  const proxy = createServer((req, res) => {
    connects.push(`${req.method} ${req.url}`);
    res.statusCode = 502;
    res.end();
  });
  proxy.on('connect', (req, socket, head) => {
    connects.push(`CONNECT ${req.url}`);
    const basic = /^Basic (.+)$/.exec(req.headers['proxy-authorization'] ?? '')?.[1];
    credentials.push(basic === undefined ? '' : Buffer.from(basic, 'base64').toString());
    const [host, port] = (req.url ?? '').split(':');
    const upstream = connect(Number(port), host === serviceHost ? '127.0.0.1' : (host ?? ''), () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(socket);
      socket.pipe(upstream);
    });
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  return { proxy, connects, credentials };
}
