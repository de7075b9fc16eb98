import type { Context } from 'koa';
import { InvalidJsonError, PayloadTooLargeError, UnsupportedMediaTypeError } from '../agent-errors.js';

/**
 * The most a send's body may hold: one user message with an image at the
 * document's 14 MiB of base64, its JSON around it, and room to spare.
 */
export const MAX_SEND_BODY_BYTES = 16 * 1024 * 1024;

/** Whether a Content-Type header names JSON (`application/json`, any parameters, `+json` suffixes). */
export function isJsonContentType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(';', 1)[0]!.trim().toLowerCase();
  return type === 'application/json' || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Reads the request body as JSON: UnsupportedMediaTypeError (415) unless it
 * is sent as JSON, PayloadTooLargeError (413) as soon as more than
 * `limitBytes` arrive or Content-Length announces more (the connection is
 * closed after the answer, so the rest is not read), InvalidJsonError (400)
 * when it does not parse (an empty body included).
 */
export async function readJsonBody(ctx: Context, limitBytes = MAX_SEND_BODY_BYTES): Promise<unknown> {
  const contentType = ctx.get('Content-Type') || undefined;
  if (!isJsonContentType(contentType)) throw new UnsupportedMediaTypeError(contentType);
  const declared = Number(ctx.get('Content-Length') || Number.NaN);
  if (Number.isFinite(declared) && declared > limitBytes) {
    ctx.set('Connection', 'close');
    throw new PayloadTooLargeError(limitBytes);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limitBytes) {
        ctx.set('Connection', 'close');
        throw new PayloadTooLargeError(limitBytes);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof PayloadTooLargeError) throw err;
    throw new InvalidJsonError('the body could not be read to its end');
  }
  const text = Buffer.concat(chunks, size).toString('utf8');
  if (text.trim() === '') throw new InvalidJsonError('the body is empty');
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new InvalidJsonError((err as Error).message.slice(0, 200));
  }
}
