import { HookgateError } from '../../kernel/errors.js';
import { loadPluginModules } from '../plugin-modules.js';
import { resolveAgentIdentity } from '../agent-api/agent-identity.js';
import type { Agent } from '../agent-api/agent.js';
import { start } from '../agent-api/start.js';
import { hashApiToken, mintApiToken } from '../http/api-tokens.js';
import { startAgentServer } from '../http/agent-server.js';
import type { CliSession } from './cli-session.js';
import { EXIT } from './exit-codes.js';
import { agentsOf, startDatabaseOf } from './run-agent-module.js';

/** What `hookgate serve` takes on its command line (each overrides the config's `serve` section). */
export interface ServeCommandOptions {
  host?: string;
  port?: number;
}

/**
 * `hookgate serve [modules...] [--host] [--port]`: loads the agent modules
 * (the config's `serve.agents` and those named here; every exported
 * function with a capitalized name is an agent, as for `hookgate run`),
 * starts the agent runtime on the config's store (recovering what a killed
 * server left), and serves each agent at `/agents/<identity>` and the
 * operator routes at `/operator`, behind `serve.tokens` (dev mode without
 * them: loopback only). Prints one line `hookgate serve listening on <url>`
 * when ready. On SIGTERM or SIGINT it drains (running submissions settle,
 * open streams get their last chunks) and resolves with exit code 0.
 */
export async function serveCommand(session: CliSession, modules: readonly string[], options: ServeCommandOptions): Promise<number> {
  const config = session.config();
  const files = [...config.serve.agents, ...modules];
  if (files.length === 0) throw new HookgateError('AGENT_INVALID', 'hookgate serve: no agent modules to serve: name them (hookgate serve agents.js) or list them in the config (serve.agents)');
  const agents: Array<{ identity: string; agent: Agent }> = [];
  for (const file of files) {
    for (const { agent } of await agentsOf(file)) agents.push({ identity: resolveAgentIdentity(agent, undefined), agent });
  }
  const runtime = await start({ agents: agents.map((a) => a.agent), config, db: startDatabaseOf(config), plugins: await loadPluginModules(config.plugins.extra, config.baseDir) });
  let server;
  try {
    server = await startAgentServer({
      runtime,
      agents,
      tokens: config.serve.tokens,
      host: options.host ?? config.serve.host,
      port: options.port ?? config.serve.port,
      heartbeatMs: config.serve.heartbeatMs,
      logger: runtime.kernel.logger,
    });
  } catch (err) {
    await runtime.stop();
    throw new HookgateError('AGENT_INVALID', err instanceof Error ? err.message : String(err));
  }
  process.stdout.write(`hookgate serve listening on ${server.url}${server.authenticated ? '' : ' (dev mode: no API tokens, loopback only)'}\n`);
  for (const { identity } of agents) process.stdout.write(`  ${server.url}/agents/${identity}\n`);
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      process.stdout.write(`hookgate serve: ${signal}, draining\n`);
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      resolve();
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  await server.close();
  process.stdout.write('hookgate serve: stopped\n');
  return EXIT.ok;
}

/** `hookgate serve token [name]`: a new API token, printed once, and the config entry that accepts it (its hash only). */
export function serveTokenCommand(name: string): number {
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(name)) throw new HookgateError('AGENT_INVALID', `hookgate serve token: '${name.slice(0, 64)}' is not a token name (letters, digits, "_", "." and "-")`);
  const token = mintApiToken();
  process.stdout.write(`token (shown once; give it to the client): ${token}\n`);
  process.stdout.write(`add to hookgate.config.yaml:\nserve:\n  tokens:\n    - name: ${name}\n      sha256: ${hashApiToken(token)}\n`);
  return EXIT.ok;
}
