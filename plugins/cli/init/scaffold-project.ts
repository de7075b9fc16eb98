import { lstat, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { PROJECT_TEMPLATES, type ProjectTemplate } from './project-templates.js';

/** What `scaffoldProject` wrote (`dir` is absolute), or why it wrote nothing. */
export type ScaffoldResult =
  | { ok: true; dir: string; written: readonly ProjectTemplate[] }
  | { ok: false; dir: string; refused: string };

/**
 * Writes the project templates into `dir` (created when missing). Without
 * `force`, refuses when any of the files already exists (a symlink counts,
 * dangling or not) and writes nothing; the refusal names every one.
 * With `force`, an existing file (or symlink) is removed and written anew, so
 * a symlink is replaced, never written through.
 */
export async function scaffoldProject(dir: string, options: { force?: boolean } = {}): Promise<ScaffoldResult> {
  const root = path.resolve(dir);
  const rootStat = await lstatOrUndefined(root);
  if (rootStat && !rootStat.isDirectory()) return { ok: false, dir: root, refused: `${root} exists and is not a folder` };

  const existing: string[] = [];
  for (const t of PROJECT_TEMPLATES) if (await lstatOrUndefined(path.join(root, t.path))) existing.push(t.path);
  if (existing.length > 0 && !options.force) {
    const what = existing.length === 1 ? 'this file exists' : 'these files exist';
    return { ok: false, dir: root, refused: `${what} in ${root} and would be overwritten: ${existing.join(', ')} (nothing was written; --force overwrites them)` };
  }

  for (const t of PROJECT_TEMPLATES) {
    const file = path.join(root, t.path);
    await mkdir(path.dirname(file), { recursive: true });
    if (options.force) await rm(file, { force: true });
    // 'wx': never write through something that appeared after the check.
    await writeFile(file, t.content, { flag: 'wx' });
  }
  return { ok: true, dir: root, written: PROJECT_TEMPLATES };
}

async function lstatOrUndefined(file: string) {
  try {
    return await lstat(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
