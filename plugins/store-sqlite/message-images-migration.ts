import type { Migration } from './migrations.js';

/**
 * Schema 9: the images of a user message (document 001's attachments, sent to
 * the model with the text), as one JSON column of the message's log entry
 * (`[{ mediaType, data }]`, NULL without images: no byte more for any other
 * row). Existing messages have none.
 */
export const MESSAGE_IMAGES_MIGRATION: Migration = Object.freeze({
  version: 9,
  description: 'message images: the images a user message carries to the model',
  sql: `ALTER TABLE operation_log ADD COLUMN images TEXT;`,
});
