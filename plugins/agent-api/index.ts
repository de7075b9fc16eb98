import { definePlugin, type Plugin } from '../../kernel/plugin.js';
import { AgentSources, Config, Hooks, Logger, Operations, Sandbox, Store, ThreadHooks } from '../../kernel/tokens.js';
import { unsafeHostRoot, type HostRootConfig } from '../../config/check-sandbox-root.js';
import { HookgateError } from '../../kernel/errors.js';
import { HarnessHost } from './harness.js';
import { HarnessSource } from './harness-source.js';
import { AGENT_FUNCTION_SOURCE_ID } from './agent.js';
import { AgentDirectory } from './agent-directory.js';
import { AgentRuntimeNotStartedError } from './agent-errors.js';
import { agentFunctionSource, type SendToInstance } from './agent-function-source.js';
import { SubmissionCoordinator } from './submission-coordinator.js';

/** What the agent-api plugin is built with: the runtime's agents and the source their operations run from. */
export interface AgentApiPluginOptions {
  directory: AgentDirectory;
  /** Default `agent-functions` (the render engine's source). */
  agentSource?: string;
  /** Called from `ready` with the kernel's coordinator, once it recovered what a previous process left. */
  onReady?: (coordinator: SubmissionCoordinator) => void;
}

interface AgentApiState {
  coordinator?: SubmissionCoordinator;
}

/**
 * Document 001 over the runtime core: binds the `AgentDirectory` and the
 * agent-functions source (the render engine, `agent-function-source.ts`), and in
 * `ready` (when `Operations`, `Hooks` and the store resolve) builds the
 * submission coordinator and recovers the instances with unsettled
 * submissions (running ones resumed, queued ones started). `stop` drains
 * the coordinator (a send in flight settles or stays as stored).
 */
export function agentApiPlugin(options: AgentApiPluginOptions): Plugin {
  let live: SubmissionCoordinator | undefined;
  // The harness (scratch prompts of harness tools and event callbacks): its own agent source, the runtime attached in ready.
  const harnesses = new HarnessHost(new HarnessSource());
  // useDispatchMessage(): a send to the instance behind a render, admitted by the coordinator as dispatch() would.
  const sendToSelf: SendToInstance = async ({ identity, instanceId, uid, message }) => {
    const agent = options.directory.byIdentity(identity);
    if (live === undefined || agent === undefined) throw new AgentRuntimeNotStartedError('useDispatchMessage()');
    const admitted = await live.admit({ agent, id: instanceId, message, hasInitialData: false, ...(uid !== undefined ? { uid } : {}) });
    return { dispatchId: admitted.dispatchId, acceptedAt: admitted.acceptedAt, ...(admitted.uid !== undefined ? { uid: admitted.uid } : {}), submissionId: admitted.submission.id };
  };
  return definePlugin({
    id: 'agent-api',
    description: 'document 001: agent instances, durable submissions, dispatch / init / getAgentInstance',
    requires: [Store, Config],
    optional: [ThreadHooks],
    provides: [AgentDirectory, AgentSources],
    state: (): AgentApiState => ({}),
    register(ctx) {
      ctx.bindValue(AgentDirectory, options.directory);
      // The render engine: every registered agent function, rendered before each step of its submissions.
      ctx.bindFactory(AgentSources, (c) => {
        // A localSandbox(root) is judged like sandbox.root: never the data folder, the SQLite file, the config folder or a policy path.
        const config = c.resolve(Config) as HostRootConfig;
        return agentFunctionSource(options.directory, c.resolve(Store), sendToSelf, undefined, harnesses, (root) => unsafeHostRoot(root, config));
      });
      ctx.bindValue(AgentSources, harnesses.source);
    },
    async ready(ctx) {
      // Before anything is recovered: a resumed operation opens its agent's thread hooks.
      for (const identity of options.directory.identities()) {
        const hooks = options.directory.byIdentity(identity)?.threadHooks;
        if (hooks === undefined || hooks.length === 0) continue;
        if (!ctx.has(ThreadHooks)) throw new HookgateError('THREAD_HOOK_MISSING', `agent function "${identity}" has threadHooks, but no plugin provides thread hooks (load the thread-hooks plugin)`);
        ctx.resolve(ThreadHooks).addAgentHooks(identity, hooks, `agent function ${identity}`);
      }
      const coordinator = new SubmissionCoordinator({
        store: ctx.resolve(Store),
        operations: ctx.resolve(Operations),
        hooks: ctx.resolve(Hooks),
        directory: options.directory,
        agentSource: options.agentSource ?? AGENT_FUNCTION_SOURCE_ID,
        logger: ctx.resolve(Logger),
      });
      ctx.state.coordinator = coordinator;
      harnesses.attach({ operations: ctx.resolve(Operations), store: ctx.resolve(Store), sandbox: ctx.has(Sandbox) ? ctx.resolve(Sandbox) : undefined });
      live = coordinator;
      await coordinator.recover();
      options.onReady?.(coordinator);
    },
    async stop(ctx) {
      await ctx.state.coordinator?.drain();
      live = undefined;
      harnesses.detach();
    },
  });
}

export { SubmissionCoordinator } from './submission-coordinator.js';
