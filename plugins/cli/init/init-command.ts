import path from 'node:path';
import { EXIT } from '../exit-codes.js';
import { scaffoldProject } from './scaffold-project.js';

/**
 * `hookgate init [dir]`: scaffolds a project that `hookgate run` and
 * `hookgate policy test` accept as generated, then prints what it wrote and
 * the commands to try. Exit 2, writing nothing, when a file would be
 * overwritten (unless `force`) or `dir` is not a folder.
 */
export async function initCommand(dir: string, options: { force?: boolean }): Promise<number> {
  const result = await scaffoldProject(dir, options);
  if (!result.ok) {
    process.stderr.write(`error: hookgate init: ${result.refused}\n`);
    return EXIT.usage;
  }
  const width = Math.max(...result.written.map((t) => t.path.length));
  process.stdout.write(`created a hookgate project in ${result.dir}\n`);
  for (const t of result.written) process.stdout.write(`  ${t.path.padEnd(width)}  ${t.purpose}\n`);
  const relative = path.relative(process.cwd(), result.dir);
  const cd = relative.startsWith('..') || path.isAbsolute(relative) ? result.dir : relative;
  process.stdout.write(
    [
      '',
      'next:',
      ...(cd === '' ? [] : [`  cd ${/\s/.test(cd) ? JSON.stringify(cd) : cd}`]),
      '  hookgate run agents/assistant.yaml',
      '  hookgate run agents/assistant.yaml --hooks hooks/audit.mjs',
      '  hookgate policy test',
      '  hookgate policy check',
      '',
    ].join('\n'),
  );
  return EXIT.ok;
}
