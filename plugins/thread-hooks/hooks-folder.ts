import { existsSync, readdirSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { HookgateError } from '../../kernel/errors.js';
import { defineHook } from './define-hook.js';
import type { SourcedThreadHook } from './thread-hook-set.js';

/** Where thread hooks are loaded from when nothing else is configured, relative to the project folder. */
export const DEFAULT_HOOKS_FOLDER = 'agents/hooks';

const MODULE_FILE = /\.(?:js|mjs|cjs)$/;
const SKIPPED_FILE = /\.(?:d\.[cm]?ts|map)$/;
const TYPESCRIPT_FILE = /\.[cm]?ts$/;

export interface LoadHooksFolderOptions {
  /** The folder; relative paths are resolved against `baseDir`. */
  folder: string;
  /** What a relative `folder` is resolved against (the config file's folder, or the working directory). */
  baseDir: string;
  /**
   * Whether a folder that does not exist is an error. The default folder may
   * be missing (an agent without hooks); a folder someone configured may not
   * (a typo there would silently drop every hook).
   */
  required: boolean;
}

/**
 * Loads every hook file of a hooks folder and its subfolders, in code-point
 * order of their paths relative to it: any file name, one hook per file as
 * its default export (a `defineHook` result or the same plain object).
 * JavaScript modules are imported (`.js`, `.mjs`, `.cjs`); declaration files
 * and source maps are skipped. THREAD_HOOK_INVALID names the file for: a
 * folder that is empty as a path, is not a folder, or is required and
 * missing; a TypeScript file with no compiled `.js` next to it (Node cannot
 * import it); a module that fails to import; a missing default export; a
 * default export that is not a valid hook.
 */
export async function loadHooksFolder(options: LoadHooksFolderOptions): Promise<SourcedThreadHook[]> {
  if (typeof options.folder !== 'string' || options.folder.trim() === '') throw invalid('hooks folder', 'the path is empty');
  const folder = isAbsolute(options.folder) ? options.folder : resolve(options.baseDir, options.folder);
  if (!existsSync(folder)) {
    if (!options.required) return [];
    throw invalid(folder, 'the hooks folder does not exist');
  }
  if (!statSync(folder).isDirectory()) throw invalid(folder, 'the hooks folder is not a folder');
  const files = listFiles(folder).sort((a, b) => (relative(folder, a) < relative(folder, b) ? -1 : 1));
  const present = new Set(files);
  const hooks: SourcedThreadHook[] = [];
  for (const file of files) {
    if (SKIPPED_FILE.test(file)) continue;
    if (TYPESCRIPT_FILE.test(file)) {
      if (!present.has(file.replace(TYPESCRIPT_FILE, '.js'))) throw invalid(file, 'a TypeScript hook file must be compiled to JavaScript first (no .js file next to it)');
      continue;
    }
    if (!MODULE_FILE.test(file)) continue;
    let module: Record<string, unknown>;
    try {
      module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
    } catch (err) {
      throw invalid(file, `the module failed to load: ${(err as Error)?.message ?? String(err)}`, err);
    }
    if (!('default' in module) || module.default === undefined) throw invalid(file, 'no default export (a hook file default-exports one defineHook(...) result)');
    hooks.push({ definition: defineHook(module.default, file), source: file });
  }
  return hooks;
}

function listFiles(folder: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) out.push(...listFiles(path));
    else if (entry.isFile() || (entry.isSymbolicLink() && isFileTarget(path))) out.push(path);
  }
  return out;
}

/** A symlink to a file is loaded like the file (a symlink to a folder is not followed: no cycles). */
function isFileTarget(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    throw invalid(path, 'a symbolic link whose target does not exist');
  }
}

function invalid(file: string, what: string, cause?: unknown): HookgateError {
  return new HookgateError('THREAD_HOOK_INVALID', `${file}: ${what}`, { cause, details: { file } });
}
