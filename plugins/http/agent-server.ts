import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import Koa, { type Context, type Next } from 'koa';
import Router from '@koa/router';
import { errorMessage } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/logger.js';
import type { Agent } from '../agent-api/agent.js';
import { AgentApiError, RouteNotFoundError } from '../agent-api/agent-errors.js';
import { createAgentRouter } from '../agent-api/http/agent-router.js';
import { FIXED_RESPONSE_HEADERS, respondWithError } from '../agent-api/http/error-envelope.js';
import type { AgentRuntimeHandle } from '../agent-api/start.js';
import { ApiTokenCheck, isLoopbackHost, type ApiTokenEntry } from './api-tokens.js';
import { createOperatorRouter } from './operator-routes.js';

/** What `hookgate serve` builds its server from. */
export interface AgentServerOptions {
  runtime: AgentRuntimeHandle;
  /** The agents to mount, each at `/agents/<identity>`. */
  agents: ReadonlyArray<{ identity: string; agent: Agent }>;
  tokens: readonly ApiTokenEntry[];
  host: string;
  port: number;
  heartbeatMs: number;
  logger: Logger;
}

/** A listening server: its URL, and `close()`, which drains it. */
export interface AgentServer {
  readonly url: string;
  /** Whether requests need an API token (false: dev mode, loopback only). */
  readonly authenticated: boolean;
  /**
   * Stops accepting connections, lets running submissions settle (a send
   * admitted now answers 503 `runtime_unavailable`), hands open event
   * streams their last chunks and ends them, then closes every connection
   * and stops the runtime. Idempotent.
   */
  close(): Promise<void>;
}

/** A request without a valid API token: 401 `unauthorized`. The token is never echoed. */
class UnauthorizedError extends AgentApiError {
  constructor() {
    super('HTTP_UNAUTHORIZED', 'unauthorized', 401, 'this server needs an API token: send Authorization: Bearer <token>');
    this.name = 'UnauthorizedError';
  }
}

/**
 * `hookgate serve`'s HTTP server (Koa): each agent's router
 * (createAgentRouter) at `/agents/<identity>`, the operator routes at
 * `/operator`, everything else 404 `route_not_found`. With API tokens
 * configured every request needs `Authorization: Bearer <token>` (checked
 * against the hashes in constant time; 401 otherwise). Without tokens it
 * refuses to listen anywhere but a loopback address (dev mode). Resolves
 * once listening; rejects with AGENT_INVALID-style config errors before.
 */
export async function startAgentServer(options: AgentServerOptions): Promise<AgentServer> {
  const tokens = new ApiTokenCheck(options.tokens);
  if (!tokens.configured && !isLoopbackHost(options.host)) {
    throw new Error(`hookgate serve: no API tokens are configured (serve.tokens), so it listens only on a loopback address; '${options.host}' is not one`);
  }
  const unexpected = (err: unknown, ctx?: Context) => options.logger.error('an HTTP request failed', { method: ctx?.method, path: ctx?.path, error: errorMessage(err) });
  const app = new Koa();
  app.silent = true;
  app.on('error', (err: unknown) => options.logger.warn('an HTTP response failed', { error: errorMessage(err) }));
  app.use(async (ctx: Context, next: Next) => {
    if (tokens.configured && tokens.match(ctx.get('Authorization') || undefined) === undefined) {
      ctx.set('WWW-Authenticate', 'Bearer');
      return respondWithError(ctx, new UnauthorizedError());
    }
    await next();
  });
  const root = new Router();
  for (const { identity, agent } of options.agents) {
    root.use(`/agents/${identity}`, createAgentRouter(agent, { heartbeatMs: options.heartbeatMs, onUnexpectedError: unexpected }).routes());
  }
  root.use('/operator', createOperatorRouter(options.runtime.kernel, (err) => unexpected(err)).routes());
  app.use(root.routes());
  app.use(async (ctx: Context) => {
    ctx.set(FIXED_RESPONSE_HEADERS);
    respondWithError(ctx, new RouteNotFoundError(ctx.method, ctx.path));
  });

  const server: Server = app.listen(options.port, options.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${address.port}`,
    authenticated: tokens.configured,
    close() {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        try {
          await options.runtime.stop();
        } finally {
          server.closeAllConnections();
          await closed;
        }
      })();
      return closing;
    },
  };
}
