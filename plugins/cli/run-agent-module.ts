import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { HookgateError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { Agent } from '../agent-api/agent.js';
import { AgentRunError } from '../agent-api/agent-errors.js';
import { resolveAgentIdentity } from '../agent-api/agent-identity.js';
import { init } from '../agent-api/init.js';
import { start, type StartDatabase } from '../agent-api/start.js';
import type { HookgateConfig } from '../../config/defaults.js';
import type { CliSession } from './cli-session.js';
import { EXIT } from './exit-codes.js';
import { reportParked } from './operation-tree.js';

/** What `hookgate run <module>` takes besides the module and the message. */
export interface RunAgentModuleOptions {
  json?: boolean;
  /** The instance id (`--id`): the same id continues the conversation; default a fresh one. */
  id?: string;
  /** Which agent of the module (`--agent`, its identity or export name) when it exports several. */
  agent?: string;
  /** `--initial-data <json>`: instance-creation data for a send that creates the instance. */
  initialData?: string;
}

/** Module files `hookgate run` treats as agent modules (document 001 agent functions) rather than agent files. */
export function isAgentModule(file: string): boolean {
  return /\.(mjs|cjs|js)$/i.test(file);
}

/**
 * `hookgate run <module.js> [message] [--id] [--agent] [--initial-data]`:
 * imports the module, registers every exported function with a capitalized
 * name as an agent (the registration rule of document 001's `'use agent'`
 * modules), starts the agent API's runtime on the config's store and sends
 * the message to one instance with `init(agent, { id }).dispatch()`, printing
 * the run's timeline. Exit codes as for agent files: 0 completed, 1 failed or
 * aborted, 3 parked for approval (the operation id is printed; decide it
 * with `hookgate approve`, then send again to the same `--id`).
 */
export async function runAgentModule(session: CliSession, file: string, message: string | undefined, options: RunAgentModuleOptions): Promise<number> {
  const agents = await agentsOf(file);
  const agent = pick(file, agents, options.agent);
  if (message === undefined || message.trim() === '') throw usage(`hookgate run ${file}: give the message to send, e.g. hookgate run ${file} "hello"`);
  const initialData = options.initialData === undefined ? undefined : parseJson(options.initialData);
  const config = session.config();
  const db = startDatabaseOf(config);
  const runtime = await start({ agents: agents.map((a) => a.agent), config, db });
  const close = session.showTimeline(runtime.kernel, options.json);
  try {
    const parked = parkedOperation(runtime.kernel, resolveAgentIdentity(agent.agent, undefined));
    const send = init(agent.agent, options.id === undefined ? {} : { id: options.id }).dispatch({ message, ...(initialData !== undefined ? { initialData } : {}) });
    const outcome = await Promise.race([send.then((reply) => ({ reply })), parked.promise.then((operationId) => ({ operationId }))]);
    if ('operationId' in outcome) {
      reportParked(outcome.operationId, options.json);
      return EXIT.parked;
    }
    const { reply } = outcome;
    if (!options.json) process.stdout.write(`instance ${reply.uid ? `uid ${reply.uid}, ` : ''}submission ${reply.submissionId}\n`);
    else process.stdout.write(`${JSON.stringify({ type: 'reply', ...reply })}\n`);
    return EXIT.ok;
  } catch (err) {
    if (err instanceof AgentRunError) {
      process.stderr.write(`the submission ${err.submissionId} ended ${err.outcome}: ${err.cause instanceof Error ? err.cause.message : err.message}\n`);
      return EXIT.failed;
    }
    throw err;
  } finally {
    close();
    // A parked submission stays in the store (the approval decides it); stop() does not wait for it.
    await runtime.stop();
  }
}

/** Resolves with the first operation of `identity` that parks for approval in this run. */
function parkedOperation(kernel: Kernel, identity: string): { promise: Promise<string> } {
  const ours = new Set<string>();
  const promise = new Promise<string>((resolve) => {
    kernel.events.on((event) => {
      if (event.type === 'operation_started' && (event.agentId === identity || (event.parentOperationId !== undefined && ours.has(event.parentOperationId)))) ours.add(event.operationId);
      if (event.type === 'approval_requested' && ours.has(event.operationId)) resolve(event.operationId);
    });
  });
  return { promise };
}

export async function agentsOf(file: string): Promise<Array<{ exportName: string; agent: Agent }>> {
  let module: Record<string, unknown>;
  try {
    module = (await import(pathToFileURL(path.resolve(file)).href)) as Record<string, unknown>;
  } catch (err) {
    throw usage(`${file}: the agent module could not be loaded: ${err instanceof Error ? err.message : String(err)}`);
  }
  const agents = Object.entries(module)
    .filter(([name, value]) => /^[A-Z]/.test(name) && typeof value === 'function')
    .map(([exportName, agent]) => ({ exportName, agent: agent as Agent }));
  if (agents.length === 0) throw usage(`${file} exports no agent function (an exported function whose name starts with a capital letter)`);
  return agents;
}

function pick(file: string, agents: Array<{ exportName: string; agent: Agent }>, wanted: string | undefined): { exportName: string; agent: Agent } {
  if (wanted === undefined) {
    if (agents.length === 1) return agents[0]!;
    throw usage(`${file} exports ${agents.length} agents (${agents.map((a) => a.exportName).join(', ')}): choose one with --agent <name>`);
  }
  const found = agents.find((a) => a.exportName === wanted || resolveAgentIdentity(a.agent, undefined) === wanted);
  if (!found) throw usage(`${file} has no agent "${wanted}" (it exports ${agents.map((a) => a.exportName).join(', ')})`);
  return found;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw usage(`--initial-data is not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function usage(message: string): HookgateError {
  return new HookgateError('AGENT_INVALID', message);
}

/**
 * The `start()` store of a command that runs agent modules on the config's
 * store: its SQLite file, the config's store as it is for a networked one
 * (PostgreSQL), memory for memory. Synchronous.
 */
export function startDatabaseOf(config: HookgateConfig): StartDatabase {
  if (config.store.driver === 'sqlite') return { sqlite: config.store.sqlite.path };
  return config.store.driver === 'memory' ? 'memory' : 'config';
}
