import { AgentRenderError } from './agent-errors.js';
import { agentPrefix, requireRootFrame } from './render-slot.js';

/** The model block of the agent's view: the provider plugin, the provider's model name and provider options (the agent file's `model`). */
export interface ModelBlock {
  readonly provider: string;
  readonly name?: string;
  readonly [option: string]: unknown;
}

/** `useModel`'s argument: a `'provider/model'` specifier, or a model block (`{ provider, name?, ...options }` or `{ model: 'provider/model', ...options }`). */
export type ModelChoice = string | ({ readonly model: string } & Readonly<Record<string, unknown>>) | ModelBlock;

/**
 * `'provider/model'` split at the first `/` into `{ provider, name }` (the
 * name may hold more slashes: `openrouter/meta/llama`). Throws
 * AgentRenderError for a specifier without a provider or a model.
 */
export function parseModelSpecifier(specifier: string): { provider: string; name: string } {
  const slash = specifier.indexOf('/');
  const provider = slash < 0 ? '' : specifier.slice(0, slash).trim();
  const name = slash < 0 ? '' : specifier.slice(slash + 1).trim();
  if (provider === '' || name === '') {
    throw new AgentRenderError(`model specifier "${JSON.stringify(specifier).slice(1, -1).slice(0, 120)}" must be "provider/model", like "openai/gpt-4o-mini"`, { specifier: specifier.slice(0, 120) });
  }
  return { provider, name };
}

/**
 * Declares the agent's model for this render: exactly once per render (a
 * second call throws here, none throws when the render ends). The argument
 * may change between renders. Synchronous; AgentRenderError outside a
 * render, in a subagent render, or for a malformed choice.
 */
export function useModel(choice: ModelChoice): void {
  const frame = requireRootFrame('useModel', 'a delegate runs with the model its definition names.');
  if (frame.model !== undefined) {
    throw new AgentRenderError(`${agentPrefix(frame)}useModel() was called twice in one render: an agent has one model (compute the choice first if it depends on state).`, { hook: 'useModel' });
  }
  frame.model = modelBlockOf(choice);
}

function modelBlockOf(choice: ModelChoice): ModelBlock {
  if (typeof choice === 'string') return Object.freeze(parseModelSpecifier(choice));
  if (choice === null || typeof choice !== 'object' || Array.isArray(choice)) {
    throw new AgentRenderError(`useModel() takes "provider/model" or a model block { provider, name?, ...options }; got ${choice === null ? 'null' : Array.isArray(choice) ? 'an array' : typeof choice}`, { hook: 'useModel' });
  }
  const { model, ...rest } = choice as Record<string, unknown>;
  if (model !== undefined) {
    if (typeof model !== 'string') throw new AgentRenderError('useModel({ model }): model must be a "provider/model" string', { hook: 'useModel' });
    if (rest.provider !== undefined || rest.name !== undefined) throw new AgentRenderError('useModel(): give either model: "provider/model" or provider and name, not both', { hook: 'useModel' });
    return Object.freeze({ ...rest, ...parseModelSpecifier(model) });
  }
  if (typeof rest.provider !== 'string' || rest.provider.trim() === '') throw new AgentRenderError('useModel({ provider }): provider must be a non-empty string', { hook: 'useModel' });
  if (rest.name !== undefined && (typeof rest.name !== 'string' || rest.name.trim() === '')) throw new AgentRenderError('useModel({ name }): name must be a non-empty string', { hook: 'useModel' });
  return Object.freeze({ ...rest }) as ModelBlock;
}
