import type { BuiltinTool } from './builtin-tool.js';
import { BUILTIN_TOOL_SOURCE } from './builtin-tool.js';
import { DEFAULT_READ_LIMIT_BYTES, type SandboxFs } from './sandbox-path.js';
import { ToolArgs } from './tool-args.js';

const READ_ENCODINGS = ['utf8', 'base64', 'hex', 'latin1'] as const;
const WRITE_ENCODINGS = ['utf8', 'base64'] as const;

const PATH_RULES =
  'Paths are relative to the sandbox folder (absolute paths are accepted only when they lie inside it); ' +
  'paths that leave the sandbox, including through symlinks, are refused.';

const pathParameter = (what: string) => ({ type: 'string', minLength: 1, description: `${what} ${PATH_RULES}` });

/**
 * The `fs/*` tools, all confined to `sandbox`: readFile, writeFile, listDir,
 * stat, deletePath. Each validates its arguments first, then runs async file
 * I/O; failures are `HookgateError`s whose message names the path as given.
 */
export function createFsTools(sandbox: SandboxFs, options: { readLimitBytes?: number } = {}): BuiltinTool[] {
  const readLimit = options.readLimitBytes ?? DEFAULT_READ_LIMIT_BYTES;
  const tool = (apiName: string, description: string, parameters: Record<string, unknown>, run: BuiltinTool['run']): BuiltinTool => ({
    definition: { identifier: 'fs', apiName, toolSource: BUILTIN_TOOL_SOURCE, description, parameters },
    // Must agree with how `run` reads the path (listDir: missing or empty is the root; deletePath: the entry itself).
    pathArgs: [{ name: 'path', mode: apiName === 'deletePath' ? 'entry' : 'follow', ...(apiName === 'listDir' ? { default: '.' } : {}) }],
    run,
  });

  return [
    tool(
      'readFile',
      `Reads a file from the sandbox folder and returns its contents as text. Files larger than ${formatBytes(readLimit)} are ` +
        'truncated and the result ends with a note saying so. Use encoding "base64" or "hex" for binary files. ' +
        'Fails if the file does not exist or is a directory (use fs/listDir for directories).',
      {
        type: 'object',
        properties: {
          path: pathParameter('Path of the file to read.'),
          encoding: { type: 'string', enum: READ_ENCODINGS, default: 'utf8', description: 'How to decode the bytes. Default utf8.' },
        },
        required: ['path'],
        additionalProperties: false,
      },
      async (args, ctx) => {
        const a = new ToolArgs('fs/readFile', args, ['path', 'encoding']);
        const filePath = a.requiredString('path');
        const encoding = a.optionalEnum('encoding', READ_ENCODINGS) ?? 'utf8';
        ctx.signal.throwIfAborted();
        const r = await sandbox.readFile(filePath, { encoding, limitBytes: readLimit });
        const note = r.truncated ? `\n\n[truncated: the file has ${r.size} bytes; only the first ${r.bytesRead} are shown]` : '';
        return {
          content: r.text + note,
          data: { path: r.path, size: r.size, bytesRead: r.bytesRead, truncated: r.truncated, encoding: r.encoding },
        };
      },
    ),
    tool(
      'writeFile',
      'Writes a file in the sandbox folder, replacing it if it exists, and creates missing parent folders. ' +
        'Returns the number of bytes written. Use encoding "base64" to write binary content.',
      {
        type: 'object',
        properties: {
          path: pathParameter('Path of the file to write.'),
          content: { type: 'string', description: 'The full new contents of the file.' },
          encoding: { type: 'string', enum: WRITE_ENCODINGS, default: 'utf8', description: 'How `content` is encoded. Default utf8.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
      async (args, ctx) => {
        const a = new ToolArgs('fs/writeFile', args, ['path', 'content', 'encoding']);
        const filePath = a.requiredString('path');
        const content = a.requiredText('content');
        const encoding = a.optionalEnum('encoding', WRITE_ENCODINGS) ?? 'utf8';
        ctx.signal.throwIfAborted();
        const r = await sandbox.writeFile(filePath, content, { encoding });
        return { content: `wrote ${r.bytes} bytes to ${JSON.stringify(r.path)}`, data: r };
      },
    ),
    tool(
      'listDir',
      'Lists the entries of a folder in the sandbox, sorted by name, each with its type: "file", "dir", "symlink" or "other". ' +
        'Returns JSON: {"path": ..., "entries": [{"name": ..., "type": ...}]}.',
      {
        type: 'object',
        properties: { path: { ...pathParameter('Folder to list. Default "." (the sandbox root).'), default: '.' } },
        additionalProperties: false,
      },
      async (args, ctx) => {
        const a = new ToolArgs('fs/listDir', args, ['path']);
        const dirPath = a.optionalString('path') || '.';
        ctx.signal.throwIfAborted();
        const r = await sandbox.listDir(dirPath);
        return { content: JSON.stringify(r), data: r };
      },
    ),
    tool(
      'stat',
      'Describes a path in the sandbox: its type ("file", "dir", "symlink", "other"), size in bytes and last modification time. ' +
        'Returns JSON. Fails if the path does not exist.',
      {
        type: 'object',
        properties: { path: pathParameter('Path to describe.') },
        required: ['path'],
        additionalProperties: false,
      },
      async (args, ctx) => {
        const a = new ToolArgs('fs/stat', args, ['path']);
        const target = a.requiredString('path');
        ctx.signal.throwIfAborted();
        const r = await sandbox.stat(target);
        return { content: JSON.stringify(r), data: r };
      },
    ),
    tool(
      'deletePath',
      'Deletes a file, a symlink (not what it points to) or a folder in the sandbox. A folder that is not empty is deleted ' +
        'only with recursive: true. The sandbox folder itself cannot be deleted.',
      {
        type: 'object',
        properties: {
          path: pathParameter('Path to delete.'),
          recursive: { type: 'boolean', default: false, description: 'Also delete a folder that is not empty, with everything in it.' },
        },
        required: ['path'],
        additionalProperties: false,
      },
      async (args, ctx) => {
        const a = new ToolArgs('fs/deletePath', args, ['path', 'recursive']);
        const target = a.requiredString('path');
        const recursive = a.optionalBoolean('recursive') ?? false;
        ctx.signal.throwIfAborted();
        const r = await sandbox.deletePath(target, { recursive });
        return { content: `deleted ${r.type} ${JSON.stringify(r.path)}`, data: r };
      },
    ),
  ];
}

function formatBytes(n: number): string {
  if (n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}
