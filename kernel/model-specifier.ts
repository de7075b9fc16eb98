import { HookgateError } from './errors.js';
import type { ModelProvider } from './model.js';

/** A model named as `provider/model`: the provider plugin's name and the provider-specific model name. */
export interface ModelSpecifier {
  provider: string;
  name: string;
}

/** What a provider name looks like (the `name` of a ModelProvider: `openai`, `anthropic`, `scripted`, `my-proxy`). */
export const MODEL_PROVIDER_NAME_PATTERN = /^[a-z][a-z0-9_-]*$/;

const MAX_SPECIFIER_LENGTH = 512;

/**
 * Splits a specifier such as document 001's `useModel('openai/gpt-4o-mini')`
 * into `{ provider: 'openai', name: 'gpt-4o-mini' }`. Only the first `/`
 * splits, so a model name may itself hold slashes (`openai/meta-llama/Llama-3-8B`
 * gives the name `meta-llama/Llama-3-8B`, as OpenAI-compatible servers name
 * models). Pure and synchronous; surrounding whitespace is not trimmed.
 *
 * Throws MODEL_SPECIFIER_INVALID, quoting the value, for anything else: not a
 * string, no `/`, an empty or malformed provider part (lowercase letters,
 * digits, `-` and `_`, starting with a letter), an empty model part, control
 * characters or whitespace, or more than 512 characters.
 */
export function parseModelSpecifier(specifier: unknown): ModelSpecifier {
  if (typeof specifier !== 'string') {
    throw invalid(specifier, `expected a string "provider/model", got ${specifier === null ? 'null' : typeof specifier}`);
  }
  if (specifier.length > MAX_SPECIFIER_LENGTH) throw invalid(specifier, `longer than ${MAX_SPECIFIER_LENGTH} characters`);
  // eslint-disable-next-line no-control-regex
  if (/[\s\u0000-\u001f\u007f]/.test(specifier)) throw invalid(specifier, 'it holds whitespace or control characters');
  const slash = specifier.indexOf('/');
  if (slash === -1) throw invalid(specifier, 'no "/" between the provider and the model name (write it as "openai/gpt-4o-mini")');
  const provider = specifier.slice(0, slash);
  const name = specifier.slice(slash + 1);
  if (provider === '') throw invalid(specifier, 'the provider part before "/" is empty');
  if (!MODEL_PROVIDER_NAME_PATTERN.test(provider)) {
    throw invalid(specifier, `the provider "${provider}" is not a provider name (lowercase letters, digits, "-" and "_", starting with a letter)`);
  }
  if (name === '') throw invalid(specifier, 'the model name after "/" is empty');
  return { provider, name };
}

/**
 * The bound provider a specifier names, from the ModelProviders the kernel
 * bound (the list a plugin context's `resolveAll(ModelProviders)` gives, or the
 * runtime's map by name). Synchronous, no I/O. Throws MODEL_NOT_FOUND naming
 * the specifier and the providers on offer when none has that name.
 */
export function resolveModelProvider(
  specifier: ModelSpecifier,
  providers: Iterable<ModelProvider> | ReadonlyMap<string, ModelProvider>,
): ModelProvider {
  const byName = providers instanceof Map ? (providers as ReadonlyMap<string, ModelProvider>) : new Map([...(providers as Iterable<ModelProvider>)].map((p) => [p.name, p] as const));
  const found = byName.get(specifier.provider);
  if (found) return found;
  const have = [...byName.keys()].sort();
  throw new HookgateError(
    'MODEL_NOT_FOUND',
    `model "${specifier.provider}/${specifier.name}": no plugin provides the model provider "${specifier.provider}" (have: ${have.join(', ') || 'none'})`,
    { details: { provider: specifier.provider, model: specifier.name, available: have } },
  );
}

function invalid(specifier: unknown, why: string): HookgateError {
  const shown = typeof specifier === 'string' ? JSON.stringify(specifier.length > 80 ? `${specifier.slice(0, 80)}…` : specifier) : `(a ${specifier === null ? 'null' : typeof specifier})`;
  return new HookgateError('MODEL_SPECIFIER_INVALID', `model specifier ${shown} is invalid: ${why}`, {
    details: { specifier: typeof specifier === 'string' ? specifier.slice(0, 200) : null },
  });
}
