import * as v from 'valibot';
import { AgentRenderError } from './agent-errors.js';
import type { AgentAppendMessage } from './use-agent-events.js';

/** The prefix of signal types the runtime keeps for its own narration (an agent's append of one throws). */
export const RESERVED_SIGNAL_PREFIX = 'hookgate.';

const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const AppendSchema = v.strictObject({
  kind: v.literal('signal', 'kind must be "signal"'),
  type: v.pipe(v.string('type must be a string'), v.nonEmpty('type must not be empty'), v.maxLength(200, 'type is longer than 200 characters')),
  body: v.string('body must be a string'),
  attributes: v.optional(
    v.record(
      v.pipe(v.string(), v.regex(XML_NAME, 'attribute names must be XML names'), v.notValue('type', '"type" is taken by the signal\'s own type (an attribute would override it)')),
      v.string('attribute values must be strings'),
    ),
  ),
  tagName: v.optional(v.pipe(v.string(), v.regex(XML_NAME, 'tagName must be an XML name (letters, digits, "_", "-", "."; not starting with a digit, "-" or ".")'))),
});

/**
 * Checks one `ctx.append` argument (`hook` names where it was called) and
 * returns it as the signal it is. AgentRenderError for `kind: 'user'` (new
 * input belongs to a dispatch), a malformed signal, or a reserved type.
 */
export function checkAppend(hook: string, message: unknown): AgentAppendMessage {
  if (message !== null && typeof message === 'object' && (message as { kind?: unknown }).kind === 'user') {
    throw new AgentRenderError(`${hook}: append() only appends kind: "signal" messages into the running response; a kind: "user" message is new input, so dispatch it instead`, { hook });
  }
  const parsed = v.safeParse(AppendSchema, message);
  if (!parsed.success) throw new AgentRenderError(`${hook}: append() message is not valid: ${parsed.issues.map((i) => `${v.getDotPath(i) ?? 'message'}: ${i.message}`).join('; ')}`, { hook });
  if (parsed.output.type.startsWith(RESERVED_SIGNAL_PREFIX)) {
    throw new AgentRenderError(`${hook}: append() signal type "${parsed.output.type}" is reserved for the runtime's own signals`, { hook });
  }
  return parsed.output as AgentAppendMessage;
}

/**
 * A signal as the model reads it: an XML element named `tagName` (default
 * `signal`) with `type` and the attributes as XML attributes and the body as
 * escaped text. (Delivered signals of item 3 render the same way; fold the
 * two when both are in.)
 */
export function renderSignal(signal: AgentAppendMessage): string {
  const tag = signal.tagName ?? 'signal';
  const attributes = { type: signal.type, ...(signal.attributes ?? {}) };
  const rendered = Object.entries(attributes).map(([k, value]) => ` ${k}="${escapeXml(value, true)}"`).join('');
  return `<${tag}${rendered}>${escapeXml(signal.body, false)}</${tag}>`;
}

function escapeXml(text: string, attribute: boolean): string {
  const out = text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  return attribute ? out.replace(/"/g, '&quot;') : out;
}
