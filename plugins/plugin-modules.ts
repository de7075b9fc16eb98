import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { HookgateError, errorMessage } from '../kernel/errors.js';
import type { Plugin } from '../kernel/plugin.js';
import { pluginShapeProblem } from '../kernel/plugin-shape.js';

/** Whether a `plugins.extra` entry names a file (`./x.js`, `../x`, `/abs/x.js`) rather than a package. */
export function isModulePath(spec: string): boolean {
  return spec.startsWith('./') || spec.startsWith('../') || spec === '.' || spec === '..' || path.isAbsolute(spec) || /^[a-zA-Z]:[\\/]/.test(spec);
}

/**
 * Loads the plugin modules `plugins.extra` names, in order: a path resolves
 * against `baseDir` (the config file's folder; absolute allowed), a package
 * name is resolved from `baseDir` as Node resolves it there. Each module's
 * default export must be a plugin (`definePlugin`); its shape is checked.
 * Throws CONFIG_INVALID naming the field and the module:
 * `plugins.extra[0] ("./my-plugin.js"): cannot find the module (looked for /cfg/my-plugin.js)`.
 */
export async function loadPluginModules(specs: readonly string[], baseDir: string): Promise<Plugin[]> {
  const plugins: Plugin[] = [];
  for (const [i, spec] of specs.entries()) {
    const field = `plugins.extra[${i}] (${JSON.stringify(spec)})`;
    const fail = (why: string, cause?: unknown): never => {
      throw new HookgateError('CONFIG_INVALID', `${field}: ${why}`, { cause, details: { field: `plugins.extra[${i}]`, module: spec } });
    };
    let file: string;
    if (isModulePath(spec)) {
      file = path.resolve(baseDir, spec);
    } else {
      try {
        file = createRequire(path.join(baseDir, 'hookgate.config.yaml')).resolve(spec);
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'MODULE_NOT_FOUND') fail(`cannot find the package (resolved from ${baseDir}; is it installed there?)`, err);
        fail(`cannot resolve the package: ${errorMessage(err)}`, err);
      }
    }
    let mod: Record<string, unknown>;
    try {
      mod = (await import(pathToFileURL(file!).href)) as Record<string, unknown>;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Not found is about this file only when the missing one is the file itself, not something it imports.
      if ((code === 'ERR_MODULE_NOT_FOUND' || code === 'ENOENT') && String((err as Error).message).includes(file!)) {
        fail(`cannot find the module (looked for ${file!})`, err);
      }
      fail(`the module failed to load: ${errorMessage(err)}`, err);
    }
    if (!('default' in mod!) || mod!.default === undefined) {
      fail(`the module has no default export; export the plugin as \`export default definePlugin({ ... })\``);
    }
    const problem = pluginShapeProblem(mod!.default);
    if (problem) fail(`the default export is not a plugin: ${problem}`);
    plugins.push(mod!.default as Plugin);
  }
  return plugins;
}
