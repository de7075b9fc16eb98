import { toolListCovers, type AgentDefinition } from '../agent-definition.js';
import type { ToolCall } from '../messages.js';
import type { ToolDefinition, ToolSource } from '../tools.js';

/** The tool a call names, as the kernel's tool map holds it. */
export type ToolEntry = { tool: ToolDefinition; source: ToolSource };

/**
 * What the first stages of the gate answer for one tool call: whether the
 * allow-list lets the agent make it, whether `approval.tools` covers it, and
 * the tool entry it names. A step asks these several times for the same call
 * (admission, the next-step decision, the gate, the afterStep observers), so
 * the answers are remembered per call object, on the side: never on the call,
 * so nothing of it is stored or reaches a hook.
 *
 * Only what cannot change is remembered: the call must be frozen (so its
 * `identifier` and `apiName` stay), and the answers are reused only for the
 * very same frozen reference lists (`tools`, `subagents`, `approval.tools`)
 * and the very same tool map. Anything else is answered afresh. Remembering
 * changes no answer: every function here returns what the uncached check
 * would.
 */
interface CallFacts {
  readonly tools: readonly string[] | undefined;
  readonly subagents: readonly string[] | undefined;
  readonly approvalTools: readonly string[] | undefined;
  readonly allowed: boolean;
  readonly needsApproval: boolean;
  /** The tool map `entry` was looked up in (undefined: not looked up yet). */
  toolMap?: ReadonlyMap<string, ToolEntry>;
  entry?: ToolEntry;
}

const remembered = new WeakMap<ToolCall, CallFacts>();

/** Sub-agent calls are `agents/<id>`. */
export const SUBAGENT_IDENTIFIER = 'agents';

type CallName = Pick<ToolCall, 'identifier' | 'apiName'>;

function allowedUncached(agent: AgentDefinition, call: CallName): boolean {
  if (call.identifier === SUBAGENT_IDENTIFIER) return (agent.subagents ?? []).includes(call.apiName);
  return toolListCovers(agent.tools, call.identifier, call.apiName);
}

function frozenOrAbsent(list: readonly string[] | undefined): boolean {
  return list === undefined || Object.isFrozen(list);
}

/**
 * The facts of `call` for `agent`: the remembered ones, else computed (and
 * remembered when they cannot change). One lookup answers both the
 * allow-list and the approval requirement.
 */
export function callFacts(agent: AgentDefinition, call: ToolCall): Readonly<{ allowed: boolean; needsApproval: boolean }> {
  return factsOf(agent, call) ?? computeFacts(agent, call);
}

function computeFacts(agent: AgentDefinition, call: CallName): CallFacts {
  const approvalTools = agent.approval?.tools;
  return {
    tools: agent.tools,
    subagents: agent.subagents,
    approvalTools,
    allowed: allowedUncached(agent, call),
    needsApproval: toolListCovers(approvalTools, call.identifier, call.apiName),
  };
}

/** The remembered facts of `call` for `agent`, computed and remembered on a miss; undefined when they could change. */
function factsOf(agent: AgentDefinition, call: ToolCall): CallFacts | undefined {
  const known = remembered.get(call);
  if (known !== undefined && known.tools === agent.tools && known.subagents === agent.subagents && known.approvalTools === agent.approval?.tools) return known;
  if (!Object.isFrozen(call) || !frozenOrAbsent(agent.tools) || !frozenOrAbsent(agent.subagents) || !frozenOrAbsent(agent.approval?.tools)) return undefined;
  const facts = computeFacts(agent, call);
  remembered.set(call, facts);
  return facts;
}

/** The allow-list: `agents/<id>` for the agent's sub-agents, any other tool by `tools`. */
export function callAllowed(agent: AgentDefinition, call: CallName): boolean {
  const facts = isToolCall(call) ? factsOf(agent, call) : undefined;
  return facts !== undefined ? facts.allowed : allowedUncached(agent, call);
}

/** Whether `approval.tools` covers the call (`*` covers sub-agent calls too). */
export function callNeedsApproval(agent: AgentDefinition, call: CallName): boolean {
  const facts = isToolCall(call) ? factsOf(agent, call) : undefined;
  return facts !== undefined ? facts.needsApproval : toolListCovers(agent.approval?.tools, call.identifier, call.apiName);
}

/**
 * The tool a call names in `toolMap` (keyed `identifier/apiName`), only when
 * identifier and apiName match exactly (no `a/b` + `c` vs `a` + `b/c`
 * confusion). `agent` is only the key the answer is remembered under.
 */
export function toolEntryIn(toolMap: ReadonlyMap<string, ToolEntry>, agent: AgentDefinition, call: ToolCall): ToolEntry | undefined {
  const facts = factsOf(agent, call);
  if (facts !== undefined && facts.toolMap === toolMap) return facts.entry;
  const entry = toolMap.get(`${call.identifier}/${call.apiName}`);
  const exact = entry && entry.tool.identifier === call.identifier && entry.tool.apiName === call.apiName ? entry : undefined;
  if (facts !== undefined) {
    facts.toolMap = toolMap;
    facts.entry = exact;
  }
  return exact;
}

function isToolCall(call: CallName): call is ToolCall {
  return typeof (call as ToolCall).id === 'string';
}
