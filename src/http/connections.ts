import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import { Server as TlsServer } from 'node:tls';
import type { FastifyInstance } from 'fastify';

/**
 * Keep-alive connections hold a closing server open until their timeout (72 s): Node closes
 * those idle when `close()` is called, but not one whose response is still finishing then (a
 * download whose last read has not yet returned, though the client has every byte). Tracked
 * here, an app's close ends every connection without a request in flight at once, and each busy
 * one as soon as its response is sent. Used by the API and by the agent listener (HTTPS).
 */
export function closeConnectionsOnClose(app: FastifyInstance): void {
  const connections = trackConnections(app.server);
  app.addHook('preClose', async () => connections.closeIdle());
}

function trackConnections(server: Server): { closeIdle(): void } {
  const open = new Set<Socket>();
  const busy = new Set<Socket>();
  let closing = false;
  // An HTTPS server's 'connection' sockets are the TCP ones under the TLS sockets its requests
  // carry: tracked by those, every connection would look idle and a busy one be cut off.
  const opened = server instanceof TlsServer ? 'secureConnection' : 'connection';
  server.on(opened, (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      busy.delete(socket);
    });
  });
  server.on('request', (req, res) => {
    const socket = req.socket;
    busy.add(socket);
    res.once('close', () => {
      busy.delete(socket);
      if (closing) socket.end();
    });
  });
  return {
    closeIdle() {
      closing = true;
      for (const socket of open) if (!busy.has(socket)) socket.destroy();
    },
  };
}
