import { HookgateError } from '../../kernel/errors.js';
import type { OperationRecord, Store } from '../../kernel/store.js';
import type { Agent } from './agent.js';
import { isSubagentRef, splitSubagentRef, type ResolvedSubagent } from './agent-resources.js';
import { renderAgent, type RenderedAgent } from './render-agent.js';
import { ThreadStateBuffer } from './thread-state-buffer.js';
import { HARNESS_CONTEXT_KEY } from './harness.js';

/** What resolving a delegated child's subagent reads. */
export interface SubagentResolutionDeps {
  readonly store: Store;
  /** The root agent function of an identity (AGENT_NOT_FOUND when none). */
  agentOf(identity: string): Agent;
  /** The latest render and view model of operation `operationId` in this process, when it renders agent `ref`. */
  live(operationId: string, ref: string): { readonly render: RenderedAgent; readonly model: unknown } | undefined;
}

/**
 * How the agent-functions source finds the subagent a delegated child
 * (`ref` = `<delegating ref>.<name>`) runs, and its model (the definition's
 * override, else the delegating operation's): from the delegating
 * operation's latest render in this process, else (after a restart) by
 * rendering the delegating agent again, read-only, from the store (a root
 * over its thread's values; a subagent by resolving its own parent first).
 * Asynchronous; AGENT_NOT_FOUND for a child with no delegating operation,
 * one whose delegating operation is gone, or a subagent the delegating
 * agent no longer declares.
 */
export function subagentResolver(deps: SubagentResolutionDeps): (ref: string, parentOperationId: string | undefined) => Promise<ResolvedSubagent> {
  async function resolve(ref: string, parentOperationId: string | undefined): Promise<ResolvedSubagent> {
    const { parentRef, name } = splitSubagentRef(ref);
    if (parentOperationId === undefined) {
      throw new HookgateError('AGENT_NOT_FOUND', `agent "${ref}" is a subagent of "${parentRef}": it runs only as a task delegated by it`, { details: { agentId: ref } });
    }
    const live = deps.live(parentOperationId, parentRef);
    let render = live?.render;
    let model = live?.model;
    if (render === undefined) {
      const parentOp = await deps.store.getOperation(parentOperationId);
      if (parentOp === undefined) throw new HookgateError('AGENT_NOT_FOUND', `agent "${ref}": its delegating operation ${parentOperationId} is not in the store`, { details: { agentId: ref } });
      // Delegated from a harness prompt: the subagent is the harness's agent's, whose operation is the prompt's parent.
      if (isHarnessOperation(parentOp)) return resolve(ref, parentOp.parentOperationId);
      model = (parentOp.agent as { model?: unknown }).model;
      render = await readOnlyRender(parentRef, parentOp);
    }
    const definition = render.subagents.find((s) => s.name === name);
    if (definition === undefined) {
      throw new HookgateError('AGENT_NOT_FOUND', `agent "${parentRef}" does not declare the subagent "${name}" (declares: ${render.subagents.map((s) => s.name).join(', ') || 'none'})`, {
        details: { agentId: ref },
      });
    }
    return { definition, model: (definition.model ?? model) as ResolvedSubagent['model'] };
  }

  /** The render of `ref` for the stored operation `op`, writing nothing. */
  async function readOnlyRender(ref: string, op: OperationRecord): Promise<RenderedAgent> {
    if (isSubagentRef(ref)) {
      const resolved = await resolve(ref, op.parentOperationId);
      return renderAgent(resolved.definition.agent as never, { kind: 'subagent', agentName: ref });
    }
    const thread = await deps.store.getThread(op.threadId);
    return renderAgent(deps.agentOf(ref), { instanceId: thread?.instanceId, initialData: thread?.initialData, state: new ThreadStateBuffer(thread?.values ?? {}), agentName: ref });
  }

  return resolve;
}

/**
 * Whether `op` is a harness prompt's operation: harness.ts puts the harness's
 * agent id under its key in the context, and a delegated child inherits its
 * parent's context, so only an operation of that agent id is the prompt's.
 */
function isHarnessOperation(op: OperationRecord): boolean {
  return op.parentOperationId !== undefined && op.context?.[HARNESS_CONTEXT_KEY] === op.agentId;
}

/** The longest chain of delegating operations walked (far past the depth cap: a loop in corrupted records ends here). */
const MAX_ANCESTORS = 64;

/**
 * How many harness conversations lie above a delegated child whose parent is
 * `parentOperationId`: each counts as one delegation level (document 001)
 * that the child's agent id (`<ref>.<name>`) does not show, so the depth cap
 * adds them to the id's depth. Reads the operations up the chain from the
 * store (once per child session). Asynchronous; a missing record ends the walk.
 */
export async function harnessLevelsAbove(store: Store, parentOperationId: string | undefined): Promise<number> {
  let levels = 0;
  let id = parentOperationId;
  for (let hops = 0; id !== undefined && hops < MAX_ANCESTORS; hops++) {
    const op = await store.getOperation(id);
    if (op === undefined) break;
    if (isHarnessOperation(op)) levels++;
    id = op.parentOperationId;
  }
  return levels;
}
