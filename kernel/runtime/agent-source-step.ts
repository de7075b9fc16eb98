import { parseAgentDefinition, type AgentDefinition } from '../agent-definition.js';
import { HookgateError, errorMessage } from '../errors.js';
import { AGENT_SOURCE_CONTEXT_KEY, STATIC_AGENT_SOURCE_ID, type AgentSource, type AgentSourceContext, type AgentView } from './agent-source.js';
import { stepAgentOf } from './agent-source-view.js';
import type { OperationRecord } from '../store.js';
import type { RunningOperation } from './running-operation.js';
import type { RuntimeDeps } from './runtime-deps.js';

/** The source an operation runs from and the definition it stored at start (what the static source runs). */
interface Binding {
  readonly sourceId: string;
  readonly source: AgentSource;
  readonly definition: AgentDefinition;
}

/** Per loaded operation, bound once (start or load): the runtime's RunningOperation stays as it was. */
const bindings = new WeakMap<RunningOperation, Binding>();

/**
 * Binds a just started or loaded operation to its agent source: the one its
 * stored context names (`hookgate.agentSource`), else the static source
 * (every operation stored before agent sources). AGENT_SOURCE_NOT_FOUND when
 * this kernel has no such source: the operation is left as stored, so a
 * process that has the source's plugin can go on with it.
 */
export function bindAgentSource(deps: RuntimeDeps, op: RunningOperation): Binding {
  const sourceId = sourceIdOf(op.record);
  const binding = { sourceId, source: agentSourceOf(deps, op.record), definition: op.agent };
  bindings.set(op, binding);
  return binding;
}

/** The source a loaded operation runs from and its id (bound at the first use). */
export function boundSourceOf(deps: RuntimeDeps, op: RunningOperation): { readonly sourceId: string; readonly source: AgentSource } {
  return bindings.get(op) ?? bindAgentSource(deps, op);
}

/** The id of the source a stored operation runs from. */
function sourceIdOf(record: Pick<OperationRecord, 'context'>): string {
  return record.context[AGENT_SOURCE_CONTEXT_KEY] ?? STATIC_AGENT_SOURCE_ID;
}

/** The agent source a stored operation runs from, or AGENT_SOURCE_NOT_FOUND naming it and the operation (nothing is changed). */
export function agentSourceOf(deps: RuntimeDeps, record: Pick<OperationRecord, 'id' | 'agentId' | 'context'>): AgentSource {
  const sourceId = sourceIdOf(record);
  const source = deps.agentSources.find(sourceId);
  if (source !== undefined) return source;
  throw new HookgateError(
    'AGENT_SOURCE_NOT_FOUND',
    `operation ${record.id} runs agent "${record.agentId}" from agent source "${sourceId}", which this kernel does not have (have: ${deps.agentSources.ids().join(', ')}); start the plugin that provides it`,
    { details: { operationId: record.id, agentId: record.agentId, source: sourceId } },
  );
}

/**
 * Asks the operation's agent source for the agent of the step about to run
 * and makes it `op.agent`, which the next-step decision, the gate and the
 * model turn read (its tools: `toolMapOf`). Synchronous (undefined) when the
 * source answers synchronously; the static source answers with the
 * operation's own definition. A throw or rejection is AGENT_SOURCE_FAILED,
 * an invalid view AGENT_SOURCE_INVALID; both name the source.
 */
export function readStepAgent(deps: RuntimeDeps, op: RunningOperation): Promise<void> | undefined {
  const binding = bindings.get(op) ?? bindAgentSource(deps, op);
  const record = op.record;
  const context: AgentSourceContext = {
    operationId: record.id,
    threadId: record.threadId,
    stepIndex: record.state.stepIndex,
    operation: record,
    definition: binding.definition,
    messages: op.messages,
    ...(record.parentOperationId !== undefined ? { parentOperationId: record.parentOperationId } : {}),
  };
  const answer = ask(binding.source, binding.sourceId, record.agentId, context);
  if (!isPromise(answer)) {
    op.agent = stepAgentOf(answer, binding.sourceId, record.agentId).definition;
    return undefined;
  }
  return answer.then(
    (view) => {
      op.agent = stepAgentOf(view, binding.sourceId, record.agentId).definition;
    },
    (err: unknown) => {
      throw sourceFailed(binding.sourceId, record.agentId, context.stepIndex, err);
    },
  );
}

/** What `execAgent` stores: the definition to freeze with the operation and its context (with its source, unless static). */
export async function agentAtStart(
  deps: RuntimeDeps,
  options: { agentSource?: string; agentId?: string; agent?: AgentDefinition; threadId?: string; context?: Record<string, string>; parentOperationId?: string },
  operationId: string,
): Promise<{ agent: AgentDefinition; context: Record<string, string> }> {
  const sourceId = options.agentSource ?? STATIC_AGENT_SOURCE_ID;
  // Never inherited (a sub-agent gets its caller's context) nor given by a caller: only the source chosen here counts.
  const { [AGENT_SOURCE_CONTEXT_KEY]: _inherited, ...context } = options.context ?? {};
  if (sourceId === STATIC_AGENT_SOURCE_ID) {
    // An inline agent gets the same validation as a defined one, before anything is stored.
    const agent = options.agent ? parseAgentDefinition(options.agent, 'execAgent({ agent })') : deps.agents.get(options.agentId ?? '');
    return { agent, context };
  }
  if (options.agent !== undefined) {
    throw new HookgateError('AGENT_INVALID', `execAgent({ agentSource: "${sourceId}" }): an inline agent runs from the static source; name the agent with agentId instead`, { details: { source: sourceId } });
  }
  const ref = options.agentId;
  if (ref === undefined || ref === '') {
    throw new HookgateError('AGENT_NOT_FOUND', `execAgent({ agentSource: "${sourceId}" }) needs agentId: the agent the source resolves`, { details: { source: sourceId } });
  }
  const source = deps.agentSources.get(sourceId);
  const start: AgentSourceContext = {
    operationId,
    threadId: options.threadId ?? `thread_${operationId}`,
    stepIndex: 0,
    operation: undefined,
    definition: undefined,
    messages: [],
    ...(options.parentOperationId !== undefined ? { parentOperationId: options.parentOperationId } : {}),
  };
  let answer = ask(source, sourceId, ref, start);
  if (isPromise(answer)) {
    try {
      answer = await answer;
    } catch (err) {
      throw sourceFailed(sourceId, ref, 0, err);
    }
  }
  return { agent: stepAgentOf(answer, sourceId, ref).definition, context: { ...context, [AGENT_SOURCE_CONTEXT_KEY]: sourceId } };
}

function ask(source: AgentSource, sourceId: string, ref: string, context: AgentSourceContext): AgentView | Promise<AgentView> {
  try {
    return source.resolve(ref, context);
  } catch (err) {
    throw sourceFailed(sourceId, ref, context.stepIndex, err);
  }
}

function isPromise(value: AgentView | Promise<AgentView>): value is Promise<AgentView> {
  return typeof (value as { then?: unknown } | null)?.then === 'function';
}

export function sourceFailed(sourceId: string, agentId: string, stepIndex: number, err: unknown, when = 'resolve agent'): HookgateError {
  const causeCode = err instanceof HookgateError ? err.code : undefined;
  return new HookgateError('AGENT_SOURCE_FAILED', `agent source "${sourceId}" failed to ${when} "${agentId}" for step ${stepIndex}: ${errorMessage(err)}`, {
    cause: err,
    details: { source: sourceId, agentId, stepIndex, ...(causeCode !== undefined ? { causeCode } : {}) },
  });
}
