import type { CallToolResult, ContentBlock } from '@modelcontextprotocol/sdk/types.js';

/**
 * A tool result's content as the text the model reads: text blocks as they
 * are; every other kind described in one bracketed line (binary data is never
 * inlined: `[image: image/png, 1,204 bytes base64]`); an embedded text
 * resource with its text; structured content, when the server sent any and no
 * text block, as JSON. Blocks are joined by blank lines. A result with nothing
 * in it reads `(no content)`. Pure and synchronous.
 */
export function resultText(result: Pick<CallToolResult, 'content' | 'structuredContent'>): string {
  const parts = (result.content ?? []).map(blockText);
  if (result.structuredContent !== undefined && !(result.content ?? []).some((b) => b.type === 'text')) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  const text = parts.filter((p) => p !== '').join('\n\n');
  return text === '' ? '(no content)' : text;
}

function blockText(block: ContentBlock): string {
  switch (block.type) {
    case 'text':
      return block.text;
    case 'image':
    case 'audio':
      return `[${block.type}: ${block.mimeType}, ${size(block.data)} base64]`;
    case 'resource_link':
      return `[resource link: ${block.name} <${block.uri}>${block.mimeType ? ` (${block.mimeType})` : ''}${block.description ? `: ${block.description}` : ''}]`;
    case 'resource': {
      const r = block.resource;
      if ('text' in r && typeof r.text === 'string') return `[resource: <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}]\n${r.text}`;
      return `[resource: <${r.uri}>${r.mimeType ? ` (${r.mimeType})` : ''}, ${size('blob' in r && typeof r.blob === 'string' ? r.blob : '')} base64]`;
    }
    default:
      return `[${String((block as { type?: unknown }).type)} content]`;
  }
}

function size(base64: string): string {
  return `${base64.length.toLocaleString('en-US')} bytes`;
}
