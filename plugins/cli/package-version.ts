import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * hookgate's version, from its package.json: the nearest one above this
 * module named `hookgate` (dist/plugins/cli/ in a checkout, or the installed
 * package). Read once, when `--version` is asked for.
 */
export function packageVersion(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'hookgate' && typeof pkg.version === 'string') return pkg.version;
    } catch {
      // No package.json here (or not JSON): look one folder up.
    }
    const parent = path.dirname(dir);
    if (parent === dir) return 'unknown';
    dir = parent;
  }
}
