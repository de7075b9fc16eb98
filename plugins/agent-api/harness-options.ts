import type * as v from 'valibot';
import { HarnessOptionsError } from './agent-errors.js';
import { isValibotSchema } from './agent-identity.js';
import { defineTool, type AgentTool } from './define-tool.js';
import { parseModelSpecifier, type ModelBlock, type ModelChoice } from './use-model.js';

/** An inline image for the prompt's user message (`{ type: 'image', data, mimeType }`, base64 data). */
export interface PromptImage {
  readonly type: 'image';
  readonly data: string;
  readonly mimeType: string;
}

/** `harness.prompt()` options (document 001 `PromptOptions`). */
export interface PromptOptions<S extends v.GenericSchema | undefined = undefined> {
  /** A valibot schema: the model must call the injected `finish` tool with arguments it accepts. */
  result?: S;
  /** Tools (`defineTool` values) for this prompt only. */
  tools?: readonly AgentTool[];
  /** The model: `'provider/model'` or a model block (`{ provider, name?, ...options }`); default the agent's `useModel`. */
  model?: ModelChoice;
  /** Reasoning effort; accepted, not yet passed to providers. */
  thinkingLevel?: 'off' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh';
  /** Aborts the prompt, as `handle.abort()` does. */
  signal?: AbortSignal;
  /** Inline images sent to the model with the prompt's text (as the user message's images). */
  images?: readonly PromptImage[];
}

/** What a prompt runs with once its options are checked. */
export interface ParsedPrompt {
  readonly model: ModelBlock;
  readonly tools: readonly AgentTool[];
  readonly result: v.GenericSchema | undefined;
}

const KNOWN = new Set(['result', 'tools', 'model', 'thinkingLevel', 'signal', 'images']);
const THINKING = new Set(['off', 'minimal', 'low', 'medium', 'high', 'xhigh']);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;
/** The largest inline image, in base64 characters (the limit delivered attachments have). */
const MAX_IMAGE_CHARS = 14 * 1024 * 1024;
const MAX_TEXT_CHARS = 1024 * 1024;

/** Checks a prompt's text and options (HarnessOptionsError naming the option) and picks its model. */
export function parsePromptOptions(text: unknown, options: unknown, agentModel: ModelBlock | undefined): ParsedPrompt {
  if (typeof text !== 'string') throw new HarnessOptionsError(`harness.prompt(text): text must be a string, got ${text === null ? 'null' : typeof text}`, { field: 'text' });
  if (text.length > MAX_TEXT_CHARS) throw new HarnessOptionsError(`harness.prompt(text): text is ${text.length} characters, more than ${MAX_TEXT_CHARS}`, { field: 'text' });
  if (options === undefined) return { model: required(agentModel), tools: [], result: undefined };
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new HarnessOptionsError('harness.prompt(text, options): options must be an object', { field: 'options' });
  const o = options as Record<string, unknown>;
  for (const key of Object.keys(o)) {
    if (!KNOWN.has(key)) throw new HarnessOptionsError(`harness.prompt(): unknown option ${JSON.stringify(key).slice(0, 80)} (known: ${[...KNOWN].join(', ')})`, { field: key.slice(0, 80) });
  }
  if (o.result !== undefined && !isValibotSchema(o.result)) throw new HarnessOptionsError('harness.prompt(): result must be a valibot schema', { field: 'result' });
  if (o.signal !== undefined && !(o.signal instanceof AbortSignal)) throw new HarnessOptionsError('harness.prompt(): signal must be an AbortSignal', { field: 'signal' });
  if (o.thinkingLevel !== undefined && !THINKING.has(o.thinkingLevel as string)) throw new HarnessOptionsError(`harness.prompt(): thinkingLevel must be one of ${[...THINKING].join(', ')}`, { field: 'thinkingLevel' });
  checkImages(o.images);
  return { model: o.model === undefined ? required(agentModel) : modelOf(o.model), tools: toolsOf(o.tools), result: o.result as v.GenericSchema | undefined };
}

function required(model: ModelBlock | undefined): ModelBlock {
  if (model === undefined) throw new HarnessOptionsError('harness.prompt(): the agent declares no model here; pass options.model', { field: 'model' });
  return model;
}

function modelOf(choice: unknown): ModelBlock {
  try {
    if (typeof choice === 'string') return Object.freeze(parseModelSpecifier(choice));
  } catch (err) {
    throw new HarnessOptionsError(`harness.prompt(): model: ${(err as Error).message}`, { field: 'model' });
  }
  if (choice === null || typeof choice !== 'object' || Array.isArray(choice)) throw new HarnessOptionsError('harness.prompt(): model must be "provider/model" or a model block { provider, name?, ...options }', { field: 'model' });
  const { model: specifier, ...block } = choice as Record<string, unknown>;
  if (specifier !== undefined) {
    // `{ model: 'provider/model', ...options }`, as useModel takes it.
    if (typeof specifier !== 'string' || block.provider !== undefined || block.name !== undefined) throw new HarnessOptionsError('harness.prompt(): model.model must be a "provider/model" string, without provider or name beside it', { field: 'model.model' });
    return Object.freeze({ ...block, ...modelOf(specifier) }) as ModelBlock;
  }
  if (typeof block.provider !== 'string' || block.provider.trim() === '') throw new HarnessOptionsError('harness.prompt(): model.provider must be a non-empty string', { field: 'model.provider' });
  if (block.name !== undefined && (typeof block.name !== 'string' || block.name.trim() === '')) throw new HarnessOptionsError('harness.prompt(): model.name must be a non-empty string', { field: 'model.name' });
  return Object.freeze({ ...block }) as ModelBlock;
}

function toolsOf(tools: unknown): AgentTool[] {
  if (tools === undefined) return [];
  if (!Array.isArray(tools)) throw new HarnessOptionsError('harness.prompt(): tools must be an array of defineTool() values', { field: 'tools' });
  const seen = new Set<string>();
  return tools.map((tool, i) => {
    let defined: AgentTool;
    try {
      defined = defineTool(tool as Parameters<typeof defineTool>[0]);
    } catch (err) {
      throw new HarnessOptionsError(`harness.prompt(): tools[${i}]: ${(err as Error).message}`, { field: `tools[${i}]` });
    }
    if (seen.has(defined.name)) throw new HarnessOptionsError(`harness.prompt(): two tools named "${defined.name}"`, { field: `tools[${i}]` });
    seen.add(defined.name);
    return defined;
  });
}

function checkImages(images: unknown): void {
  if (images === undefined) return;
  if (!Array.isArray(images)) throw new HarnessOptionsError('harness.prompt(): images must be an array', { field: 'images' });
  images.forEach((image: unknown, i) => {
    const img = image as Record<string, unknown> | null;
    const field = `images[${i}]`;
    if (img === null || typeof img !== 'object' || img.type !== 'image') throw new HarnessOptionsError(`harness.prompt(): ${field} must be { type: 'image', data, mimeType }`, { field });
    if (typeof img.mimeType !== 'string' || !/^image\/[a-z0-9.+-]+$/i.test(img.mimeType)) throw new HarnessOptionsError(`harness.prompt(): ${field}.mimeType must be an image/* type`, { field: `${field}.mimeType` });
    if (typeof img.data !== 'string' || img.data.length === 0 || img.data.length > MAX_IMAGE_CHARS || img.data.length % 4 !== 0 || !BASE64.test(img.data)) {
      throw new HarnessOptionsError(`harness.prompt(): ${field}.data must be base64 of at most ${MAX_IMAGE_CHARS} characters`, { field: `${field}.data` });
    }
  });
}
