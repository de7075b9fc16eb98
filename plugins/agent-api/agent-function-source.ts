import { HookgateError } from '../../kernel/errors.js';
import type { AgentFinishingContext, AgentJoiningContext, AgentLifecycleContext, AgentLifecycleOutcome, AgentSource, AgentSourceContext, AgentView } from '../../kernel/runtime/agent-source.js';
import type { ToolEntry } from '../../kernel/runtime/call-facts.js';
import type { Store } from '../../kernel/store.js';
import type { ToolSource } from '../../kernel/tools.js';
import { AGENT_FUNCTION_SOURCE_ID } from './agent.js';
import type { AgentDirectory } from './agent-directory.js';
import { runFinishSeam, runStartSeam } from './agent-event-seams.js';
import { runAgentTool, type AgentTool } from './define-tool.js';
import { markCallStarted, storeToolStepJournal } from './tool-step.js';
import { ToolCallInterruptedError } from './agent-errors.js';
import { renderAgent, type RenderedAgent } from './render-agent.js';
import type { RenderStateAccess } from './render-slot.js';
import { parseDeliveredMessage, type DeliveredMessage, type DeliveredMessageInput } from './delivered-message.js';
import { joinMessageId } from './submission-joining.js';
import { SUBMISSION_CONTEXT_KEY } from './submission-settlement.js';
import type { DispatchReceipt } from './dispatch.js';
import type { DispatchToSelf } from './use-dispatch-message.js';
import { ThreadStateBuffer } from './thread-state-buffer.js';
import { RESOURCE_KINDS, type ResourceKind } from './resource-kinds.js';
import { compactionMarkOf, narrateResources, narrationText } from './resource-narration.js';
import { baselineFor, composedInstructions, frameworkTools, isFrameworkCall, isSubagentRef, runFrameworkTool, type ResolvedSubagent, type ResourceBaseline } from './agent-resources.js';
import { harnessLevelsAbove, subagentResolver } from './subagent-resolution.js';
import type { OperationRecord } from '../../kernel/store.js';
import type { ToolDefinition } from '../../kernel/tools.js';
import { closeHarness, type HarnessHost } from './harness.js';
import type { ModelBlock } from './use-model.js';
import { SubmissionEnvironments, type AgentEnvironment } from './agent-environment.js';

/** The identifier of every tool an agent function mounts with `useTool`: the gate, policies and hooks see `agent/<name>`. */
export const AGENT_TOOL_IDENTIFIER = 'agent';

/** The `toolSource` of those tools (what `beforeToolCall` hooks see as the call's source). */
export const AGENT_TOOL_SOURCE = 'agent-function';

const ALLOW_AGENT_TOOLS: readonly string[] = Object.freeze([`${AGENT_TOOL_IDENTIFIER}/*`]);
const ALLOW_NONE: readonly string[] = Object.freeze([]);

/**
 * The step limit of an agent function's submission (model turns plus tool
 * calls): document 001 declares none, and agent files default to 50, which a
 * conversation of 25 tool calls would already reach. A runaway loop still
 * ends, as a failed submission naming `max_steps`.
 */
export const AGENT_FUNCTION_MAX_STEPS = 1000;
const LIMITS = Object.freeze({ maxSteps: AGENT_FUNCTION_MAX_STEPS });

/** What the source keeps per operation it renders in this process (forgotten when the operation settles). */
interface OperationSession {
  /** The operation record it was opened for: a reloaded operation (a new record object) gets a fresh session from the store. */
  readonly record: object;
  readonly instanceId: string | undefined;
  readonly initialData: unknown;
  readonly buffer: ThreadStateBuffer;
  /** What renders read and write through: the buffer, with data part writes scoped to this operation. */
  readonly access: RenderStateAccess;
  /** What `useDispatchMessage()` sends through (undefined without a coordinator or an instance). */
  readonly dispatchToSelf: DispatchToSelf | undefined;
  /** The latest render: its tools run the calls, its event callbacks run at the seams. */
  render: RenderedAgent | undefined;
  view: AgentView | undefined;
  /** What `useDelivery()` returns: the submission's message, then the latest joined delivery or appended signal. */
  delivery: DeliveredMessage | undefined;
  /** The id of the latest joined message the cursor has taken (`join_<submission id>`). */
  joinedId: string | undefined;
  viewModel: string | undefined;
  /** Tool entries by name, reused while name, description and schema stay the same. */
  readonly entries: Map<string, { readonly key: string; readonly entry: ToolEntry }>;
  /** The agent id it renders (`Identity`, or a delegated child's `Identity.subagent`). */
  readonly ref: string;
  /** A delegated child's subagent: its render is a subagent render of this definition. */
  readonly subagent: ResolvedSubagent | undefined;
  /** Harness conversations above this operation: delegation levels its ref does not show (the depth cap counts them). */
  readonly harnessLevels: number;
  /** The sandboxes `useSandbox` factories made for this operation, and the latest render's environment. */
  readonly environments: SubmissionEnvironments;
  environment: AgentEnvironment | undefined;
}

/**
 * The agent source of document 001's agent functions (id
 * `agent-functions`): an operation's `agentId` is the agent's identity in
 * `directory`; its thread is the instance (`instanceId` is `props.id`,
 * `initialData`, `values` what `usePersistentState` reads). The function is
 * rendered before every step; the view is new only when instructions, model
 * or tools changed (tool calls always run the latest render's `run`). The
 * model is the one of the operation's first render (read once per
 * submission). Lifecycle: `start` runs `useResponseStart` then
 * `useAgentStart`, `finishing` runs `useAgentFinish` (appends continue the
 * response) and, when it finishes, `useResponseFinish`; state writes are
 * handed to the commit of the step that made them (`threadValues`), data
 * parts too (a reserved thread value scoped to the operation). Renders get
 * the delivery cursor (the submission's message, then joined deliveries and
 * appended signals) and, with `sendToSelf`, the instance's dispatcher.
 * Render errors reject the step (the operation ends in error naming them).
 * At each model turn (`turnMessages`) the render's `resourceKinds` and
 * instructions are diffed against the last-narrated snapshot (the
 * operation's `state.sourceState`, carried on along the thread): the
 * `resources` / `instructions` signals go in front of the model and the
 * snapshot commits with that turn (resource-narration.ts).
 *
 * Declared skills and subagents add `activate_skill` / `task` to the tools
 * and the skill catalog to the instructions (agent-resources.ts); a
 * delegated child (`<ref>.<name>`) renders its subagent
 * (subagent-resolution.ts).
 */
export function agentFunctionSource(
  directory: AgentDirectory,
  store: Store,
  sendToSelf?: SendToInstance,
  resourceKinds: readonly ResourceKind[] = RESOURCE_KINDS,
  harnesses?: HarnessHost,
  /** Why a local sandbox's host folder may not be an agent's files (see SubmissionEnvironments). */
  unsafeHostRoot?: (root: string) => string | undefined,
): AgentSource & { readonly tools: ToolSource } {
  const sessions = new Map<string, OperationSession>();
  /** What each operation's system prompt skill catalog and task roster show (agent-resources.ts), until it settles. */
  const baselines = new Map<string, ResourceBaseline>();
  const resolveSubagent = subagentResolver({
    store,
    agentOf,
    live: (operationId, ref) => {
      const session = sessions.get(operationId);
      return session?.ref === ref && session.render !== undefined ? { render: session.render, model: session.view?.model } : undefined;
    },
  });

  /** A new harness for one invocation (a harness tool call, an event callback) of the operation's agent. */
  function harnessOf(operationId: string, identity: string, userId: string | undefined, key?: string): ReturnType<HarnessHost['open']> | undefined {
    const session = sessions.get(operationId);
    return harnesses?.open({
      parentOperationId: operationId,
      identity,
      userId,
      model: session?.view?.model as ModelBlock | undefined,
      instructions: session?.render?.instructions,
      ref: identity,
      harnessLevels: session?.harnessLevels ?? 0,
      ...(key !== undefined ? { key } : {}),
      // Delegation through task resolves against the live set: the operation's latest render.
      render: () => sessions.get(operationId)?.render,
      // Live: a conditional useSandbox swaps the environment at a turn boundary and harness.sandbox follows it.
      sandbox: () => {
        const live = sessions.get(operationId)?.environment;
        return live !== undefined ? live.sandbox : harnesses?.defaultSandbox();
      },
    });
  }

  const tools: ToolSource = {
    id: AGENT_TOOL_SOURCE,
    list: () => [],
    async execute(call, ctx) {
      const session = sessions.get(ctx.operationId);
      // activate_skill and task resolve their plain string argument against the latest render's live set.
      if (session?.render !== undefined && call.identifier === AGENT_TOOL_IDENTIFIER && isFrameworkCall(session.render, call.apiName)) return runFrameworkTool(session.render, session.ref, call.apiName, call.args, session.harnessLevels);
      const tool = session?.render?.tools.find((t) => (t.remote === undefined ? call.identifier === AGENT_TOOL_IDENTIFIER && t.name === call.apiName : t.remote.identifier === call.identifier && t.remote.apiName === call.apiName));
      if (tool === undefined) throw new Error(`tool "${call.apiName}" is not mounted by the latest render of agent "${ctx.agentId}"`);
      // Another tool is marked started before it runs: a resumed call finds the mark and is settled as interrupted,
      // not run twice. A durable tool's steps are recorded under this call instead (its id is stored with the
      // operation, so a resumed call has it too) and the call runs again, replaying them.
      if (tool.durable !== true && !(await markCallStarted(store, ctx.operationId, ctx.toolCallId))) throw new ToolCallInterruptedError(tool.name, ctx.toolCallId);
      const harness = tool.harness === true ? harnessOf(ctx.operationId, ctx.agentId, ctx.userId, ctx.toolCallId) : undefined;
      try {
        return await runAgentTool(tool, call.args, ctx.toolCallId, ctx.signal, {
          ...(ctx.log !== undefined ? { log: ctx.log } : {}),
          ...(tool.durable === true ? { steps: storeToolStepJournal(store, ctx.operationId, ctx.toolCallId) } : {}),
          ...(harness !== undefined ? { harness } : {}),
        });
      } finally {
        closeHarness(harness);
      }
    },
  };

  function agentOf(ref: string) {
    const agent = directory.byIdentity(ref);
    if (agent === undefined) {
      throw new HookgateError('AGENT_NOT_FOUND', `no agent function is registered under the identity "${ref}" (have: ${directory.identities().join(', ') || 'none'})`, { details: { agentId: ref } });
    }
    return agent;
  }

  async function openSession(operationId: string, threadId: string, record: OperationRecord, ref: string): Promise<OperationSession> {
    // A delegated child renders its subagent: no instance, no submission, no state of its own.
    const subagent = isSubagentRef(ref) ? await resolveSubagent(ref, record.parentOperationId) : undefined;
    const harnessLevels = subagent !== undefined ? await harnessLevelsAbove(store, record.parentOperationId) : 0;
    const thread = subagent === undefined ? await store.getThread(threadId) : undefined;
    const submissionId = subagent === undefined ? (record.context as Record<string, string> | undefined)?.[SUBMISSION_CONTEXT_KEY] : undefined;
    const submission = submissionId !== undefined ? await store.getSubmission(submissionId) : undefined;
    const buffer = new ThreadStateBuffer(thread?.values ?? {});
    const session: OperationSession = {
      record,
      instanceId: thread?.instanceId,
      initialData: thread?.initialData,
      buffer,
      dispatchToSelf: dispatcherFor(record.agentId, thread),
      access: { current: (name) => buffer.current(name), write: buffer.write, writeData: (name, value) => buffer.appendData(operationId, name, value) },
      render: undefined,
      view: undefined,
      delivery: submission !== undefined ? deliveredOf(submission.message) : undefined,
      joinedId: undefined,
      viewModel: undefined,
      entries: new Map(),
      ref,
      subagent,
      harnessLevels,
      environments: new SubmissionEnvironments(() => harnesses?.defaultSandbox(), unsafeHostRoot),
      environment: undefined,
    };
    // Another resolve of the same operation may have opened one meanwhile: the first stays.
    const existing = sessions.get(operationId);
    if (existing !== undefined && existing.record === record) return existing;
    sessions.set(operationId, session);
    return session;
  }

  function dispatcherFor(identity: string, thread: { instanceId?: string; uid?: string } | undefined): DispatchToSelf | undefined {
    if (sendToSelf === undefined || thread?.instanceId === undefined) return undefined;
    const { instanceId, uid } = thread;
    return (message) => sendToSelf({ identity, instanceId, uid, message });
  }

  /** Moves the delivery cursor to the latest joined message in `messages` (read from its submission), then renders. */
  function advanceThenRender(ref: string, session: OperationSession, context: AgentSourceContext): AgentView | Promise<AgentView> {
    let latest: string | undefined;
    for (let i = context.messages.length - 1; i >= 0 && latest === undefined; i--) {
      if (context.messages[i]!.id.startsWith(JOIN_PREFIX)) latest = context.messages[i]!.id;
    }
    if (latest === undefined || latest === session.joinedId) return renderFor(ref, session, context);
    const joinedId = latest;
    return store.getSubmission(joinedId.slice(JOIN_PREFIX.length)).then((joined) => {
      session.joinedId = joinedId;
      if (joined !== undefined) session.delivery = deliveredOf(joined.message);
      return renderFor(ref, session, context);
    });
  }

  function renderFor(ref: string, session: OperationSession, context: AgentSourceContext): AgentView {
    if (session.subagent !== undefined) {
      const rendered = renderAgent(session.subagent.definition.agent as never, { kind: 'subagent', agentName: ref });
      session.render = rendered;
      session.environment = session.environments.of(rendered.sandbox, ref);
      return viewOf(session, rendered, (context.definition?.model ?? session.subagent.model) as AgentView['model'], context.operation?.state.compactions ?? 0);
    }
    const rendered = renderAgent(agentOf(ref), { instanceId: session.instanceId, initialData: session.initialData, state: session.access, agentName: ref, ...(session.delivery !== undefined ? { delivery: session.delivery } : {}), ...(session.dispatchToSelf !== undefined ? { dispatchToSelf: session.dispatchToSelf } : {}) });
    session.render = rendered;
    session.environment = session.environments.of(rendered.sandbox, ref);
    // Read once per submission: the model the operation stored at start (its first render's).
    const model = (context.definition?.model ?? rendered.model) as AgentView['model'];
    return viewOf(session, rendered, model, context.operation?.state.compactions ?? 0);
  }

  function sessionOf(ref: string, context: AgentLifecycleContext): OperationSession & { render: RenderedAgent } {
    const session = sessions.get(context.operationId);
    if (session?.render === undefined) throw new HookgateError('AGENT_SOURCE_FAILED', `agent "${ref}" was not rendered for operation ${context.operationId} before its lifecycle ran`, { details: { agentId: ref } });
    return session as OperationSession & { render: RenderedAgent };
  }

  return {
    id: AGENT_FUNCTION_SOURCE_ID,
    tools,

    resolve(ref, context) {
      if (context.operation === undefined && isSubagentRef(ref)) {
        // A delegated child at start: its subagent, found through the delegating operation.
        return resolveSubagent(ref, context.parentOperationId).then((subagent) =>
          viewOf(undefined, renderAgent(subagent.definition.agent as never, { kind: 'subagent', agentName: ref }), subagent.model as AgentView['model'], 0),
        );
      }
      if (context.operation === undefined) {
        // At start: the definition the operation stores (its model is the submission's), rendered read-only.
        // The delivery of that render: the thread's running submission (the coordinator counted its attempt before starting).
        return Promise.all([store.getThread(context.threadId), store.listSubmissions({ threadId: context.threadId, statuses: ['running'] })]).then(([thread, running]) => {
          const delivery = running.length > 0 ? deliveredOf(running[running.length - 1]!.message) : undefined;
          const rendered = renderAgent(agentOf(ref), {
            instanceId: thread?.instanceId,
            initialData: thread?.initialData,
            state: new ThreadStateBuffer(thread?.values ?? {}),
            agentName: ref,
            ...(delivery !== undefined ? { delivery } : {}),
          });
          return viewOf(undefined, rendered, rendered.model as AgentView['model'], 0);
        });
      }
      // The same record object while this process runs the operation; a new one after a reload (its buffered writes, if
      // any, belonged to a commit that never landed: the store says what the values are).
      const session = sessions.get(context.operationId);
      if (session !== undefined && session.record === context.operation) return advanceThenRender(ref, session, context);
      return openSession(context.operationId, context.threadId, context.operation, ref).then((opened) => advanceThenRender(ref, opened, context));
    },

    async start(ref, context): Promise<AgentLifecycleOutcome | undefined> {
      const session = sessionOf(ref, context);
      const { render } = session;
      if (render.agentStarts.length === 0 && render.responseStarts.length === 0) return undefined;
      const outcome = await runStartSeam(render, context.operation.state.metadata ?? {}, context.signal, () => harnessOf(context.operationId, ref, context.operation.userId));
      if (outcome.signals.length > 0) session.delivery = Object.freeze({ ...outcome.signals[outcome.signals.length - 1]! });
      return { messages: outcome.messages, ...(outcome.metadata !== undefined ? { metadata: outcome.metadata } : {}) };
    },

    async joining(ref, context: AgentJoiningContext): Promise<AgentLifecycleOutcome | undefined> {
      const session = sessionOf(ref, context);
      if (session.subagent !== undefined || session.render.agentStarts.length === 0 || !context.delivery.id.startsWith(JOIN_PREFIX)) return undefined;
      // A joined delivery starts the agent again (useAgentStart once per delivered message), not the response: the
      // callbacks come from a render whose cursor is on the delivery, so useDelivery() there names it.
      const joined = await store.getSubmission(context.delivery.id.slice(JOIN_PREFIX.length));
      session.joinedId = context.delivery.id;
      if (joined !== undefined) session.delivery = deliveredOf(joined.message);
      renderFor(ref, session, context);
      const outcome = await runStartSeam({ ...session.render, responseStarts: [] }, {}, context.signal, () => harnessOf(context.operationId, ref, context.operation.userId));
      if (outcome.signals.length > 0) session.delivery = Object.freeze({ ...outcome.signals[outcome.signals.length - 1]! });
      return { messages: outcome.messages };
    },

    async finishing(ref, context: AgentFinishingContext): Promise<AgentLifecycleOutcome | undefined> {
      const session = sessionOf(ref, context);
      const { render } = session;
      if (render.agentFinishes.length === 0 && render.responseFinishes.length === 0) return undefined;
      const toolCalls = context.toolCalls.map((c) => ({ tool: c.identifier === AGENT_TOOL_IDENTIFIER ? c.apiName : `${c.identifier}/${c.apiName}`, isError: c.isError }));
      const outcome = await runFinishSeam(render, { toolCalls, usage: context.usage, continuations: context.continuations, metadata: context.operation.state.metadata ?? {} }, context.signal, () => harnessOf(context.operationId, ref, context.operation.userId));
      if (outcome.signals.length > 0) session.delivery = Object.freeze({ ...outcome.signals[outcome.signals.length - 1]! });
      return { messages: outcome.messages, ...(outcome.metadata !== undefined ? { metadata: outcome.metadata } : {}) };
    },

    turnMessages(_ref, context) {
      const session = sessions.get(context.operationId);
      if (session?.render === undefined) return undefined;
      // What this turn's render declares against what was last narrated; the new snapshot commits with the turn.
      const narration = narrateResources(resourceKinds, session.render, context.operation?.state.sourceState, compactionMarkOf(context.messages), session.environment);
      return { messages: narration.signals.map((signal) => ({ role: 'user' as const, content: narrationText(signal) })), sourceState: narration.snapshot };
    },

    threadValues(_ref, context) {
      return sessions.get(context.operationId)?.buffer.take(context.seqAfterCommit);
    },

    settled(_ref, context) {
      sessions.delete(context.operationId);
      baselines.delete(context.operationId);
    },
  };

  /** The view of a render: the previous view object when nothing the runtime reads changed. */
  function viewOf(session: OperationSession | undefined, rendered: RenderedAgent, model: AgentView['model'], compactions: number): AgentView {
    // Kept per operation, not per session: a session reopened for a reloaded record (a resume after a delegation or an
    // approval) must show the model the same catalog and roster.
    const operationId = session !== undefined ? (session.record as OperationRecord).id : undefined;
    const baseline = baselineFor(operationId !== undefined ? baselines.get(operationId) : undefined, rendered, compactions, session?.environment);
    if (operationId !== undefined) baselines.set(operationId, baseline);
    const framework = frameworkTools(rendered, baseline, AGENT_TOOL_IDENTIFIER, AGENT_TOOL_SOURCE);
    const entries = [...rendered.tools.map((tool) => entryFor(session, tool)), ...framework.map((t) => frameworkEntry(session, t))];
    const instructions = composedInstructions(rendered, baseline);
    const modelKey = JSON.stringify(model);
    const previous = session?.view;
    if (
      previous !== undefined &&
      previous.instructions === instructions &&
      session!.viewModel === modelKey &&
      sameEntries(previous.tools as readonly ToolEntry[], entries)
    ) {
      return previous;
    }
    const view: AgentView = Object.freeze({
      ...(instructions !== undefined ? { instructions } : {}),
      model,
      tools: Object.freeze(entries),
      allowList: allowListOf(rendered.tools, framework.length > 0),
      limits: LIMITS,
    });
    if (session !== undefined) {
      session.view = view;
      session.viewModel = modelKey;
    }
    return view;
  }

  function entryFor(session: OperationSession | undefined, tool: AgentTool): ToolEntry {
    // An MCP tool keeps its own identity (mcp__<server>/<tool>), so its server's policies and allow-lists apply to it.
    return frameworkEntry(
      session,
      { identifier: tool.remote?.identifier ?? AGENT_TOOL_IDENTIFIER, apiName: tool.remote?.apiName ?? tool.name, description: tool.description, parameters: tool.parameters as Record<string, unknown>, toolSource: tool.remote?.toolSource ?? AGENT_TOOL_SOURCE },
      tool.name,
    );
  }

  /**
   * The entry of a tool definition, reused while its identity, description and schema stay the same (useTool, MCP
   * and framework tools alike), kept under the name the render mounted it by (`name`: two MCP servers may share an
   * apiName).
   */
  function frameworkEntry(session: OperationSession | undefined, tool: ToolDefinition, name: string = tool.apiName): ToolEntry {
    const key = `${tool.identifier}\u0000${tool.description}\u0000${JSON.stringify(tool.parameters)}`;
    const known = session?.entries.get(name);
    if (known !== undefined && known.key === key) return known.entry;
    const entry: ToolEntry = Object.freeze({ tool: Object.freeze(tool), source: tools });
    session?.entries.set(name, { key, entry });
    return entry;
  }
}

/** How the source sends to an instance (the plugin binds it to the coordinator): agent `identity`'s instance, conditioned on its uid. */
export type SendToInstance = (request: { identity: string; instanceId: string; uid: string | undefined; message: unknown }) => Promise<DispatchReceipt>;

const JOIN_PREFIX = joinMessageId('');

/** A stored delivered message (validated at admission) as `useDelivery()` returns it; undefined when it is not one. */
function deliveredOf(message: unknown): DeliveredMessage | undefined {
  try {
    return parseDeliveredMessage(message as DeliveredMessageInput);
  } catch {
    return undefined;
  }
}

/** What a render's tools may be called as: `agent/*`, and `<identifier>/*` for each identity of a remote (MCP) tool. */
/** What the view allows: `agent/*` for useTool and framework tools (activate_skill, task), each mounted MCP server's tools. */
function allowListOf(tools: readonly AgentTool[], frameworkTools: boolean): readonly string[] {
  if (tools.length === 0) return frameworkTools ? ALLOW_AGENT_TOOLS : ALLOW_NONE;
  if (tools.every((t) => t.remote === undefined)) return ALLOW_AGENT_TOOLS;
  const identities = new Set(tools.filter((t) => t.remote !== undefined).map((t) => `${t.remote!.identifier}/*`));
  return Object.freeze([...ALLOW_AGENT_TOOLS, ...identities]);
}

function sameEntries(a: readonly ToolEntry[], b: readonly ToolEntry[]): boolean {
  return a.length === b.length && a.every((entry, i) => entry === b[i]);
}
