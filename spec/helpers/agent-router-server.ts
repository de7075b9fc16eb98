import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa from 'koa';
import Router from '@koa/router';
import { createAgentRouter } from '../../plugins/agent-api/http/agent-router.js';

/** A loopback HTTP server mounting `agent`'s router at `mount` (fast heartbeats and polls); `base` is its URL there. */
export interface AgentRouterServer {
  readonly base: string;
  close(): Promise<void>;
}

export async function listenAgentRouter(agent: Parameters<typeof createAgentRouter>[0], mount: string): Promise<AgentRouterServer> {
  const app = new Koa();
  const root = new Router();
  root.use(mount, createAgentRouter(agent, { heartbeatMs: 50, pollMs: 200 }).routes());
  app.use(root.routes());
  const server: Server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}${mount}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
