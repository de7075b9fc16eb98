import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/**
 * The step-loop bench's peers that live in their own install, bench/peers
 * (ai 7 declares node >= 22, so it cannot be one of the project's
 * devDependencies without every `npm install` on Node 20 warning). They are
 * aliased there (`ai-v7`, `ai-v6`) and loaded at run time from that folder of
 * the tree this module was built from, so the build never depends on them.
 */

/** The repository this module was built from (dist/bench/step-loop/ -> the root). */
const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const PEERS_DIR = path.join(REPO_ROOT, 'bench', 'peers');

/** Imports the ESM entry of `alias` (e.g. `ai-v7`) installed in bench/peers; a clear error when it is not installed. */
export async function importPeer<T>(alias: string, subpath = '.'): Promise<{ module: T; version: string }> {
  let packageJson: string;
  try {
    // Straight from the folder: a package whose exports leave out ./package.json cannot be resolved to it.
    packageJson = path.join(PEERS_DIR, 'node_modules', alias, 'package.json');
    if (!existsSync(packageJson)) packageJson = createRequire(path.join(PEERS_DIR, 'package.json')).resolve(`${alias}/package.json`);
  } catch {
    throw new Error(
      `the step-loop peer "${alias}" is not installed in ${PEERS_DIR}: run \`npm --prefix bench/peers install\` (or \`npm run bench:peers\`), or leave it out with --only`,
    );
  }
  const manifest = JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string; exports?: Record<string, unknown> };
  const entry = esmEntry(exportTarget(manifest.exports, subpath));
  if (!entry) throw new Error(`${packageJson}: no ESM entry for "${subpath}" in its exports`);
  const module = (await import(pathToFileURL(path.join(path.dirname(packageJson), entry)).href)) as T;
  return { module, version: manifest.version };
}

/** The exports entry of `subpath` (`.`, `./node`), also through one `*` pattern (`./providers/*`). */
function exportTarget(exports: Record<string, unknown> | undefined, subpath: string): unknown {
  if (!exports) return undefined;
  if (subpath in exports) return exports[subpath];
  for (const [key, target] of Object.entries(exports)) {
    const star = key.indexOf('*');
    if (star < 0 || !subpath.startsWith(key.slice(0, star)) || !subpath.endsWith(key.slice(star + 1))) continue;
    const matched = subpath.slice(star, subpath.length - (key.length - star - 1));
    return JSON.parse(JSON.stringify(target).replaceAll('*', matched)) as unknown;
  }
  return undefined;
}

/** The `import` (else `default`) target of an exports entry. */
function esmEntry(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (target && typeof target === 'object') {
    const conditions = target as Record<string, unknown>;
    return esmEntry(conditions.import) ?? esmEntry(conditions.default);
  }
  return undefined;
}
