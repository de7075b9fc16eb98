import { loadAgentFile } from '../../config/agent-file.js';
import { loadPluginModules } from '../plugin-modules.js';
import { HookgateError } from '../../kernel/errors.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { HookgateConfig } from '../../config/defaults.js';
import { start } from '../agent-api/start.js';
import { redisAddress } from '../execution-queue/redis-address.js';
import type { CliSession } from './cli-session.js';
import { EXIT } from './exit-codes.js';
import { agentsOf, startDatabaseOf } from './run-agent-module.js';

/** Agent files (YAML) among the worker's arguments, as opposed to agent modules. */
const AGENT_FILE = /\.ya?ml$/i;

/**
 * `hookgate worker [files...]`: queue mode's step runner. Starts a kernel
 * on the config (which must say `execution: queue`), with the agent modules
 * of `serve.agents` and those named here (as `hookgate serve` loads them, so
 * agent functions and their hooks run here too) and the agent files named
 * here (an operation carries its own agent's definition, but the sub-agents
 * it starts are looked up by id), then takes step jobs from
 * Redis until SIGTERM or SIGINT: it stops taking jobs, lets the steps in
 * flight commit and enqueue their next, stops the kernel and resolves exit
 * code 0. Prints `hookgate worker ready ...` once it takes jobs. Rejects
 * with QUEUE_NOT_CONFIGURED (exit 2) without `execution: queue`, and with
 * QUEUE_UNAVAILABLE (exit 1) when Redis does not answer.
 */
export async function workerCommand(session: CliSession, modules: readonly string[]): Promise<number> {
  const config = session.config();
  if (config.execution !== 'queue') {
    throw new HookgateError('QUEUE_NOT_CONFIGURED', 'hookgate worker: the config does not use queue mode; set execution: queue (and queue.redis) in hookgate.config.yaml, the same config the API process uses');
  }
  const agentFiles = modules.filter((m) => AGENT_FILE.test(m));
  const files = [...config.serve.agents, ...modules.filter((m) => !AGENT_FILE.test(m))];
  const define = (kernel: Kernel) => {
    for (const file of agentFiles) loadAgentFile(file, kernel.agents);
  };
  if (files.length === 0) return session.withKernel((kernel) => (define(kernel), work(kernel, config)));
  const agents = [];
  for (const file of files) for (const { agent } of await agentsOf(file)) agents.push(agent);
  const runtime = await start({ agents, config, db: startDatabaseOf(config), plugins: await loadPluginModules(config.plugins.extra, config.baseDir) });
  try {
    define(runtime.kernel);
    return await work(runtime.kernel, config);
  } finally {
    await runtime.stop();
  }
}

async function work(kernel: Kernel, config: HookgateConfig): Promise<number> {
  // Registered before work() starts taking jobs, so a signal that comes early is never missed.
  const signalled = new Promise<string>((resolve) => {
    const stop = (signal: string) => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      resolve(signal);
    };
    const onTerm = () => stop('SIGTERM');
    const onInt = () => stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
  await kernel.work();
  const shown = redisAddress(config.queue.redis, process.env).shown;
  process.stdout.write(`hookgate worker ready: steps from ${shown} (prefix ${config.queue.prefix}, ${config.queue.concurrency} at once)\n`);
  const signal = await signalled;
  process.stdout.write(`hookgate worker: ${signal}, finishing the steps in flight\n`);
  await kernel.stop();
  process.stdout.write('hookgate worker: stopped\n');
  return EXIT.ok;
}
