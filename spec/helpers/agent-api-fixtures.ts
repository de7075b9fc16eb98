import { appendFileSync } from 'node:fs';
import type { ScriptedTurn } from '../../plugins/model-scripted/scripted-model.js';
import { definePlugin, type Plugin } from '../../kernel/plugin.js';
import { AgentSources, ToolSources } from '../../kernel/tokens.js';
import type { AgentSource, AgentView } from '../../kernel/runtime/agent-source.js';
import type { ToolDefinition, ToolExecutionContext, ToolSource } from '../../kernel/tools.js';

/** The agent source id the agent-api specs run their agents from (the render engine's source stands in for it later). */
export const SPEC_AGENT_SOURCE = 'spec-agents';

/** One spec agent: its scripted turns and the tools it may call (`identifier/apiName`). */
export interface SpecAgentScript {
  turns: ScriptedTurn[];
  tools?: string[];
  onEnd?: 'error' | 'repeat-last';
  /** Tools that wait for a human's approval. */
  approval?: string[];
}

/**
 * `side/record` appends `args.line` to `file` (one line per execution, so a
 * test can count executions across processes) and answers `recorded <line>`;
 * `side/fail` throws.
 */
export class SideEffectTools implements ToolSource {
  readonly id = 'side-effects';
  constructor(private readonly file: string) {}

  list(): ToolDefinition[] {
    const parameters = { type: 'object', properties: { line: { type: 'string' } }, additionalProperties: false };
    return [
      { identifier: 'side', apiName: 'record', description: 'Appends a line to the record file', parameters, toolSource: this.id },
      { identifier: 'side', apiName: 'fail', description: 'Always throws', parameters, toolSource: this.id },
    ];
  }

  async execute(call: { apiName: string; args: Record<string, unknown> }, _ctx: ToolExecutionContext): Promise<string> {
    if (call.apiName === 'fail') throw new Error('side/fail always fails');
    appendFileSync(this.file, `${String(call.args.line)}\n`);
    return `recorded ${String(call.args.line)}`;
  }
}

/**
 * A plugin serving `scripts` (by identity) as a static agent source with the
 * scripted model, and (with `recordFile`) the side-effect tools: what the
 * agent-api specs run submissions on until the render engine is merged.
 */
export function specAgentsPlugin(scripts: Record<string, SpecAgentScript>, recordFile?: string): Plugin {
  const tools = recordFile ? new SideEffectTools(recordFile) : undefined;
  const views = new Map<string, AgentView>();
  for (const [identity, script] of Object.entries(scripts)) {
    const entries = (script.tools ?? []).map((key) => {
      const tool = tools?.list().find((t) => `${t.identifier}/${t.apiName}` === key);
      if (!tool || !tools) throw new Error(`spec agent ${identity}: no tool ${key}`);
      return { tool, source: tools };
    });
    views.set(identity, Object.freeze({ model: { provider: 'scripted', turns: script.turns, ...(script.onEnd ? { onEnd: script.onEnd } : {}) }, tools: entries, allowList: script.tools ?? [], ...(script.approval ? { approval: { tools: script.approval } } : {}) }) as AgentView);
  }
  const source: AgentSource = {
    id: SPEC_AGENT_SOURCE,
    resolve(ref) {
      const view = views.get(ref);
      if (!view) throw new Error(`no spec agent ${ref}`);
      return view;
    },
  };
  return definePlugin({
    id: 'spec-agents',
    provides: tools ? [AgentSources, ToolSources] : [AgentSources],
    register(ctx) {
      ctx.bindValue(AgentSources, source);
      if (tools) ctx.bindValue(ToolSources, tools);
    },
  });
}
