import { HookgateError } from '../../kernel/errors.js';
import type { AgentFinishingContext, AgentLifecycleOutcome, AgentSource, AgentView } from '../../kernel/runtime/agent-source.js';
import type { ToolEntry } from '../../kernel/runtime/call-facts.js';
import type { ToolSource } from '../../kernel/tools.js';
import { AGENT_FUNCTION_MAX_STEPS, AGENT_TOOL_IDENTIFIER } from './agent-function-source.js';
import { runAgentTool, type AgentTool } from './define-tool.js';
import type { Harness } from './harness.js';
import { FINISH_TOOL_NAME, GIVE_UP_TOOL_NAME, MAX_RESULT_FOLLOW_UPS, resultFollowUp, type ResultTools } from './harness-result-tools.js';
import type { ModelBlock } from './use-model.js';
import { runFrameworkTool } from './agent-resources.js';
import { TASK_PARAMETERS, TASK_TOOL, taskDescription } from './framework-tools.js';
import type { RenderedAgent, ResourceEntry } from './render-agent.js';

/** The agent source of harness prompts (`execAgent({ agentSource: 'agent-harness' })`). */
export const HARNESS_SOURCE_ID = 'agent-harness';
/** The identifier of the injected tools: policies and hooks see `harness/finish`, `harness/give_up`. */
export const HARNESS_TOOL_IDENTIFIER = 'harness';
/** The `toolSource` of every tool a harness prompt offers. */
export const HARNESS_TOOL_SOURCE = 'agent-harness';

/** One call on a harness's conversation, as its operation runs it: what the model gets and what its tools do. */
export interface HarnessCall {
  readonly kind: 'prompt' | 'compact';
  readonly instructions: string | undefined;
  readonly model: ModelBlock;
  /** The prompt's own tools (`options.tools`), as `agent/<name>`. */
  readonly tools: readonly AgentTool[];
  /** With a `result` schema: the injected `finish` / `give_up`. */
  readonly result: ResultTools | undefined;
  /** What `harness: true` tools of the prompt get. */
  readonly harness: Harness;
  /** Delegation through `task` to the agent's subagents; undefined: the harness's agent declares none it can reach. */
  readonly delegation?: HarnessDelegation | undefined;
}

/** How a harness prompt delegates: the delegating agent's id, the roster its `task` tool shows (taken when the prompt started), the live set. */
export interface HarnessDelegation {
  /** The agent id of the operation the harness belongs to (a root identity or a subagent's `<ref>.<name>`). */
  readonly ref: string;
  /** Delegation levels its ref does not show: this conversation (1) and the harness conversations above its agent's operation. */
  readonly levels: number;
  /** The subagents the `task` tool lists (frozen for the prompt's operation). */
  readonly roster: readonly ResourceEntry[];
  /** The agent's latest render, which calls resolve against (undefined once its operation settled: the roster's render then). */
  live(): RenderedAgent | undefined;
  /** The render the roster was taken from. */
  readonly rendered: RenderedAgent;
}

// A compaction call compacts everything (the request included) in its first step, then ends (`done`); a failed
// summarization ends at the step limit instead.
const COMPACT_LIMITS = Object.freeze({ maxSteps: 1 });
const COMPACT_NOW = Object.freeze({ thresholdTokens: 1, keepRecent: 0 });
// Read when a view is built, not at module load: agent-function-source.ts imports this module through harness.ts.
let promptLimits: { readonly maxSteps: number } | undefined;

/**
 * Serves the operations of harness calls. Each harness has an agent id of
 * its own (`<identity>.harness.<random>`, the `ref`); while one of its calls
 * runs, `begin` has put it here and every step's view and every tool call of
 * that operation reads it. A harness lives only in the process and
 * invocation that made it: an operation whose call is not here (a restart,
 * another process taking it over) ends in error at its next step.
 */
export class HarnessSource implements AgentSource {
  readonly id = HARNESS_SOURCE_ID;
  private readonly calls = new Map<string, HarnessCall>();
  private readonly views = new WeakMap<HarnessCall, AgentView>();

  readonly tools: ToolSource = {
    id: HARNESS_TOOL_SOURCE,
    list: () => [],
    execute: async (call, ctx) => {
      const running = this.callOf(ctx.agentId);
      if (call.identifier === HARNESS_TOOL_IDENTIFIER && running.result !== undefined && (call.apiName === FINISH_TOOL_NAME || call.apiName === GIVE_UP_TOOL_NAME)) {
        return running.result.call(call.apiName, call.args, ctx.toolCallId);
      }
      if (call.identifier === AGENT_TOOL_IDENTIFIER && call.apiName === TASK_TOOL && running.delegation !== undefined) {
        // Through the gate already (this is the tool's execution): a child operation of this prompt's, resolved against the live set.
        const { delegation } = running;
        return runFrameworkTool(delegation.live() ?? delegation.rendered, delegation.ref, TASK_TOOL, call.args, delegation.levels);
      }
      const tool = running.tools.find((t) => t.name === call.apiName);
      if (call.identifier !== AGENT_TOOL_IDENTIFIER || tool === undefined) throw new Error(`tool "${call.identifier}/${call.apiName}" is not offered by this harness prompt`);
      return runAgentTool(tool, call.args, ctx.toolCallId, ctx.signal, { harness: running.harness });
    },
  };

  /** Makes `call` the running call of harness `ref` (the harness allows one at a time). */
  begin(ref: string, call: HarnessCall): void {
    this.calls.set(ref, call);
  }

  /** Forgets `call` once its operation is over. */
  end(ref: string, call: HarnessCall): void {
    if (this.calls.get(ref) === call) this.calls.delete(ref);
  }

  resolve(ref: string): AgentView {
    const call = this.callOf(ref);
    const known = this.views.get(call);
    if (known !== undefined) return known;
    const view = call.kind === 'compact' ? compactView(call) : promptView(call, this.tools);
    this.views.set(call, view);
    return view;
  }

  /** A result-bound prompt that ended a turn without `finish` / `give_up` is reminded, at most MAX_RESULT_FOLLOW_UPS times. */
  finishing(ref: string, context: AgentFinishingContext): AgentLifecycleOutcome | undefined {
    const call = this.callOf(ref);
    if (call.result === undefined || call.result.outcome().type !== 'pending' || context.continuations >= MAX_RESULT_FOLLOW_UPS) return undefined;
    return { messages: [{ role: 'user', content: resultFollowUp() }] };
  }

  private callOf(ref: string): HarnessCall {
    const call = this.calls.get(ref);
    if (call === undefined) {
      throw new HookgateError('AGENT_SOURCE_FAILED', `no harness call for "${ref}" is running in this process: a harness lives only as long as the invocation that received it (its operation cannot go on after a restart)`, { details: { agentId: ref } });
    }
    return call;
  }
}

function promptView(call: HarnessCall, source: ToolSource): AgentView {
  const entries: ToolEntry[] = call.tools.map((tool) =>
    Object.freeze({
      tool: Object.freeze({ identifier: AGENT_TOOL_IDENTIFIER, apiName: tool.name, description: tool.description, parameters: tool.parameters as Record<string, unknown>, toolSource: HARNESS_TOOL_SOURCE }),
      source,
    }),
  );
  if (call.delegation !== undefined) {
    entries.push(
      Object.freeze({
        tool: Object.freeze({ identifier: AGENT_TOOL_IDENTIFIER, apiName: TASK_TOOL, description: taskDescription(call.delegation.roster), parameters: TASK_PARAMETERS as unknown as Record<string, unknown>, toolSource: HARNESS_TOOL_SOURCE }),
        source,
      }),
    );
  }
  if (call.result !== undefined) {
    entries.push(
      injected(source, FINISH_TOOL_NAME, 'Call this when the task is complete, with your final answer as the arguments. They are validated against the required schema; if validation fails you get the error and may call again. The first successful call wins.', call.result.finishParameters),
      injected(source, GIVE_UP_TOOL_NAME, 'Call this only if you cannot complete the task or cannot produce a result that conforms to the required schema, with a clear reason. This ends the task with a failure.', call.result.giveUpParameters),
    );
  }
  return Object.freeze({
    ...(call.instructions !== undefined ? { instructions: call.instructions } : {}),
    model: call.model as AgentView['model'],
    tools: Object.freeze(entries),
    allowList: Object.freeze(entries.map((e) => `${e.tool.identifier}/${e.tool.apiName}`)),
    limits: (promptLimits ??= Object.freeze({ maxSteps: AGENT_FUNCTION_MAX_STEPS })),
  });
}

function compactView(call: HarnessCall): AgentView {
  return Object.freeze({
    ...(call.instructions !== undefined ? { instructions: call.instructions } : {}),
    model: call.model as AgentView['model'],
    tools: Object.freeze([]),
    allowList: Object.freeze([]),
    limits: COMPACT_LIMITS,
    compaction: COMPACT_NOW,
    endAfterCompaction: true,
  });
}

function injected(source: ToolSource, apiName: string, description: string, parameters: Readonly<Record<string, unknown>>): ToolEntry {
  return Object.freeze({ tool: Object.freeze({ identifier: HARNESS_TOOL_IDENTIFIER, apiName, description, parameters: parameters as Record<string, unknown>, toolSource: HARNESS_TOOL_SOURCE }), source });
}
