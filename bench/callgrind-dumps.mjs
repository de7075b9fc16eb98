import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The dumps one callgrind run (`--callgrind-out-file=<out>`, process `pid`)
 * wrote, in dump order: each file's name, the trigger that dumped it
 * (`callgrind_control --dump=<trigger>`) and its instruction count.
 */
export function callgrindDumps(out, pid) {
  const dir = path.dirname(path.resolve(out));
  const prefix = `${path.basename(out)}.${pid}.`;
  return readdirSync(dir)
    .filter((f) => f.startsWith(prefix))
    .sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()))
    .map((file) => {
      const text = readFileSync(path.join(dir, file), 'utf8');
      return { file, trigger: /^desc: Trigger: (.*)$/m.exec(text)?.[1] ?? '', instructions: Number(/^summary: (\d+)/m.exec(text)?.[1]) };
    });
}
