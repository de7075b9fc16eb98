import { HookgateError } from './errors.js';
import type { MessageImage } from './messages.js';

/** The most base64 characters one image may have (14 MiB of base64, about 10.5 MiB of image). */
export const MAX_IMAGE_BASE64_CHARS = 14 * 1024 * 1024;
/** The most images one message may carry. */
export const MAX_IMAGES_PER_MESSAGE = 16;

const MEDIA_TYPE = /^image\/[a-z0-9][a-z0-9.+-]{0,126}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Validates the images a user message carries to the model and returns a
 * frozen copy (undefined for none). PROMPT_INVALID naming the image and the
 * field (`where[1].data`): not an array, more than
 * {@link MAX_IMAGES_PER_MESSAGE}, an entry that is not `{ mediaType, data }`,
 * a media type that is not `image/*` in lowercase, data that is empty, not
 * padded standard base64 (no `data:` prefix, no whitespace) or longer than
 * {@link MAX_IMAGE_BASE64_CHARS}.
 */
export function checkMessageImages(images: unknown, where: string): readonly MessageImage[] | undefined {
  if (images === undefined) return undefined;
  if (!Array.isArray(images)) throw invalid(where, 'must be an array of { mediaType, data }');
  if (images.length > MAX_IMAGES_PER_MESSAGE) throw invalid(where, `at most ${MAX_IMAGES_PER_MESSAGE} images, got ${images.length}`);
  if (images.length === 0) return undefined;
  return Object.freeze(
    images.map((image: unknown, i) => {
      const at = `${where}[${i}]`;
      if (typeof image !== 'object' || image === null || Array.isArray(image)) throw invalid(at, 'must be { mediaType, data }');
      const { mediaType, data, ...rest } = image as Record<string, unknown>;
      const extra = Object.keys(rest)[0];
      if (extra !== undefined) throw invalid(`${at}.${JSON.stringify(extra).slice(1, -1).slice(0, 64)}`, 'unknown field (an image is { mediaType, data })');
      if (typeof mediaType !== 'string' || !MEDIA_TYPE.test(mediaType)) throw invalid(`${at}.mediaType`, `must be an image/* media type in lowercase, got ${typeof mediaType === 'string' ? JSON.stringify(mediaType.slice(0, 64)) : typeof mediaType}`);
      if (typeof data !== 'string' || data.length === 0) throw invalid(`${at}.data`, 'must be a non-empty base64 string');
      if (data.length > MAX_IMAGE_BASE64_CHARS) throw invalid(`${at}.data`, `is ${data.length} base64 characters, more than the ${MAX_IMAGE_BASE64_CHARS} an image may have`);
      if (!BASE64.test(data)) throw invalid(`${at}.data`, 'must be padded standard base64 (A-Z a-z 0-9 + /, no data: prefix, no whitespace)');
      return Object.freeze({ mediaType, data });
    }),
  );
}

function invalid(field: string, what: string): HookgateError {
  return new HookgateError('PROMPT_INVALID', `${field}: ${what}`, { details: { field } });
}
