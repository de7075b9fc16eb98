import { MAX_IMAGES_PER_MESSAGE } from '../../kernel/message-images.js';
import type { MessageImage } from '../../kernel/messages.js';
import { InvalidRequestError } from './agent-errors.js';

/** An image for a vision-capable model: base64 `data`, its MIME type, optionally the file name it came from. */
export interface DeliveredAttachment {
  type: 'image';
  /** Base64, at most {@link MAX_ATTACHMENT_BASE64_CHARS} characters. */
  data: string;
  mimeType: string;
  filename?: string;
}

/** A direct user talking to the assistant; rendered as a user message. */
export interface DeliveredUserMessage {
  kind: 'user';
  body: string;
  attachments?: DeliveredAttachment[];
}

/** Activity beyond a 1:1 exchange (a channel event, a system's notice); rendered as an XML-tagged block. */
export interface DeliveredSignal {
  kind: 'signal';
  /** Caller-defined event type, e.g. `'slack.message'`; non-empty. */
  type: string;
  /** A plain string (JSON-stringify structured payloads yourself). */
  body: string;
  /** Rendered as attributes of the block; keys are XML names. */
  attributes?: Record<string, string>;
  /** The block's tag (default `signal`); rendered unescaped, so it must be an XML name. */
  tagName?: string;
}

/** Document 001's one input shape for every delivery surface. */
export type DeliveredMessage = DeliveredUserMessage | DeliveredSignal;

/** A delivered message, or a bare string as shorthand for `{ kind: 'user', body }`. */
export type DeliveredMessageInput = string | DeliveredMessage;

/** Document 001's cap on one attachment: 14 MiB of base64 characters. */
export const MAX_ATTACHMENT_BASE64_CHARS = 14 * 1024 * 1024;

/** Letters, digits, `_`, `-`, `.`; not starting with a digit, `-` or `.` (ASCII, so nothing needs escaping). */
const XML_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const USER_KEYS = new Set(['kind', 'body', 'attachments']);
const SIGNAL_KEYS = new Set(['kind', 'type', 'body', 'attributes', 'tagName']);
const ATTACHMENT_KEYS = new Set(['type', 'data', 'mimeType', 'filename']);

/**
 * Validates a delivered message and returns a fresh, frozen copy of it (a
 * bare string becomes `{ kind: 'user', body }`): what admission snapshots.
 * Synchronous. Throws InvalidRequestError (`invalid_request`) naming the
 * field (`message.attachments[1].data`, ...) for anything malformed: a
 * wrong kind, a missing or non-string body, unknown fields, an attachment
 * that is not a base64 image of at most 14 MiB of base64, a signal with an
 * empty type, attributes that are not a string-to-string map of XML names,
 * a tagName that is not an XML name.
 */
export function parseDeliveredMessage(input: unknown, where = 'message'): DeliveredMessage {
  if (typeof input === 'string') return Object.freeze({ kind: 'user', body: input });
  if (!isPlainObject(input)) throw invalid(where, 'must be a string or an object with kind "user" or "signal"', input);
  if (input.kind === 'user') return parseUser(input, where);
  if (input.kind === 'signal') return parseSignal(input, where);
  throw invalid(`${where}.kind`, 'must be "user" or "signal"', input.kind);
}

function parseUser(input: Record<string, unknown>, where: string): DeliveredUserMessage {
  rejectUnknown(input, USER_KEYS, where);
  const body = requireString(input.body, `${where}.body`);
  if (input.attachments === undefined) return Object.freeze({ kind: 'user', body });
  if (!Array.isArray(input.attachments)) throw invalid(`${where}.attachments`, 'must be an array of images', input.attachments);
  if (input.attachments.length > MAX_IMAGES_PER_MESSAGE) {
    throw new InvalidRequestError(`${where}.attachments has ${input.attachments.length} images; at most ${MAX_IMAGES_PER_MESSAGE} go with one message`, {
      field: `${where}.attachments`,
      length: input.attachments.length,
      max: MAX_IMAGES_PER_MESSAGE,
    });
  }
  const attachments = input.attachments.map((a, i) => parseAttachment(a, `${where}.attachments[${i}]`));
  return Object.freeze({ kind: 'user', body, attachments: Object.freeze(attachments) as DeliveredAttachment[] });
}

function parseAttachment(input: unknown, where: string): DeliveredAttachment {
  if (!isPlainObject(input)) throw invalid(where, "must be an object { type: 'image', data, mimeType, filename? }", input);
  rejectUnknown(input, ATTACHMENT_KEYS, where);
  if (input.type !== 'image') throw invalid(`${where}.type`, 'must be "image" (images are the only supported attachment)', input.type);
  const data = requireString(input.data, `${where}.data`);
  if (data.length > MAX_ATTACHMENT_BASE64_CHARS) {
    throw new InvalidRequestError(`${where}.data has ${data.length} base64 characters; at most ${MAX_ATTACHMENT_BASE64_CHARS} (14 MiB) are allowed`, {
      field: `${where}.data`,
      length: data.length,
      max: MAX_ATTACHMENT_BASE64_CHARS,
    });
  }
  if (data.length % 4 !== 0 || !BASE64.test(data)) throw invalid(`${where}.data`, 'must be base64', undefined);
  const mimeType = requireString(input.mimeType, `${where}.mimeType`);
  if (!/^image\/[A-Za-z0-9.+-]+$/.test(mimeType)) throw invalid(`${where}.mimeType`, 'must be an image MIME type such as "image/png"', mimeType);
  const out: DeliveredAttachment = { type: 'image', data, mimeType };
  if (input.filename !== undefined) out.filename = requireString(input.filename, `${where}.filename`);
  return Object.freeze(out);
}

function parseSignal(input: Record<string, unknown>, where: string): DeliveredSignal {
  rejectUnknown(input, SIGNAL_KEYS, where);
  const type = requireString(input.type, `${where}.type`);
  if (type === '') throw invalid(`${where}.type`, 'must be a non-empty string', type);
  const body = requireString(input.body, `${where}.body`);
  const out: DeliveredSignal = { kind: 'signal', type, body };
  if (input.attributes !== undefined) {
    if (!isPlainObject(input.attributes)) throw invalid(`${where}.attributes`, 'must be an object of string values', input.attributes);
    const attributes: Record<string, string> = {};
    for (const [key, value] of Object.entries(input.attributes)) {
      if (!XML_NAME.test(key)) throw invalid(`${where}.attributes`, `has the key ${JSON.stringify(key)}, which is not an XML name (letters, digits, _, -, ., not starting with a digit, - or .)`, undefined);
      if (key === 'type') throw invalid(`${where}.attributes.type`, "is taken by the signal's own type", undefined);
      attributes[key] = requireString(value, `${where}.attributes.${key}`);
    }
    out.attributes = Object.freeze(attributes) as Record<string, string>;
  }
  if (input.tagName !== undefined) {
    const tagName = requireString(input.tagName, `${where}.tagName`);
    if (!XML_NAME.test(tagName)) throw invalid(`${where}.tagName`, 'must be an XML name (letters, digits, _, -, ., not starting with a digit, - or .)', tagName);
    out.tagName = tagName;
  }
  return Object.freeze(out);
}

/**
 * What the model sees of a delivered message, as the text of one user
 * message: a user message's body; a signal as an XML-tagged block,
 * `<tag type="…" key="…">\nbody\n</tag>`, with the type, the attribute
 * values and the body escaped (`&`, `<`, `>`, and `"` in attributes) and the
 * tag as given (validated as an XML name). Attachments are not text: they
 * travel with the stored submission (the core's messages carry text only).
 */
export function renderDeliveredMessage(message: DeliveredMessage): string {
  if (message.kind === 'user') return message.body;
  const tag = message.tagName ?? 'signal';
  let attrs = ` type="${escapeAttribute(message.type)}"`;
  for (const [key, value] of Object.entries(message.attributes ?? {})) attrs += ` ${key}="${escapeAttribute(value)}"`;
  return `<${tag}${attrs}>\n${escapeText(message.body)}\n</${tag}>`;
}

function escapeText(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function escapeAttribute(text: string): string {
  return escapeText(text).replace(/"/g, '&quot;').replace(/\n/g, '&#10;').replace(/\r/g, '&#13;').replace(/\t/g, '&#9;');
}

function requireString(value: unknown, field: string): string {
  if (typeof value !== 'string') throw invalid(field, 'must be a string', value);
  return value;
}

function rejectUnknown(input: Record<string, unknown>, allowed: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(input)) if (!allowed.has(key)) throw invalid(`${where}.${key}`, 'is not a field of this message kind', undefined);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function invalid(field: string, rule: string, got: unknown): InvalidRequestError {
  return new InvalidRequestError(`${field} ${rule}${got === undefined ? '' : ` (got ${describe(got)})`}`, { field });
}

/** A short description of a bad value: its type, never its whole content (it may be huge or secret). */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value.length > 40 ? `a string of ${value.length} characters` : JSON.stringify(value);
  return typeof value;
}

/**
 * The images a delivered message sends to the model with its text: a user
 * message's attachments (media types lowercased: MIME types are
 * case-insensitive, the core takes them lowercase); undefined for none and
 * for signals.
 */
export function deliveredImages(message: DeliveredMessage): readonly MessageImage[] | undefined {
  if (message.kind !== 'user' || message.attachments === undefined || message.attachments.length === 0) return undefined;
  return message.attachments.map((a) => ({ mediaType: a.mimeType.toLowerCase(), data: a.data }));
}
