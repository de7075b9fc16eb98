import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import type { FencedBlock } from './fenced-blocks.js';

/** One TypeScript block, compiled. */
export interface CompiledExample {
  block: FencedBlock;
  /** The compiled JavaScript file (emitted even when there are errors). */
  jsFile: string;
  /** `file:line: message` for every error, lines counted in the markdown file. */
  errors: string[];
  /** A complete program: it exports nothing, so it is meant to be run, not imported. */
  isProgram: boolean;
}

/** The options a package user compiles with: `strict`, Node's ESM resolution, the package's own types. */
export function exampleCompilerOptions(root: string, outDir: string): ts.CompilerOptions {
  return {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    typeRoots: [path.join(root, 'node_modules', '@types')],
    skipLibCheck: true,
    outDir,
    noEmitOnError: false,
  };
}

function exportsSomething(text: string): boolean {
  const sf = ts.createSourceFile('x.ts', text, ts.ScriptTarget.ES2022, false, ts.ScriptKind.TS);
  return sf.statements.some(
    (s) =>
      ts.isExportDeclaration(s) ||
      ts.isExportAssignment(s) ||
      (ts.canHaveModifiers(s) && (ts.getModifiers(s) ?? []).some((m) => m.kind === ts.SyntaxKind.ExportKeyword)),
  );
}

/**
 * Compiles every block in one program, in a throw-away package folder `dir`
 * whose `node_modules/hookgate` links to the repository `root`: `import …
 * from 'hookgate'` resolves through the package's `exports` and `types`
 * exactly as in a user's project (so internal paths do not resolve). Each
 * block is its own ES module (`export {}` is appended, which changes no line).
 */
export function compileExamples(root: string, dir: string, blocks: readonly FencedBlock[]): CompiledExample[] {
  const src = path.join(dir, 'src');
  const out = path.join(dir, 'out');
  fs.mkdirSync(src, { recursive: true });
  fs.mkdirSync(path.join(dir, 'node_modules'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'doc-examples', private: true, type: 'module' }));
  const link = path.join(dir, 'node_modules', 'hookgate');
  if (!fs.existsSync(link)) fs.symlinkSync(root, link, 'dir');

  const files = blocks.map((block) => {
    const name = `${block.file.replace(/[^A-Za-z0-9]+/g, '_')}_L${block.line}.ts`;
    const file = path.join(src, name);
    fs.writeFileSync(file, `${block.text}export {};\n`);
    return { block, file };
  });
  const program = ts.createProgram(files.map((f) => f.file), exampleCompilerOptions(root, out));
  program.emit();
  return files.map(({ block, file }) => {
    const sf = program.getSourceFile(file)!;
    const errors = ts.getPreEmitDiagnostics(program, sf).map((d) => {
      const text = ts.flattenDiagnosticMessageText(d.messageText, '\n');
      if (!d.file || d.start === undefined) return `${block.file}:${block.line}: ${text}`;
      const { line } = d.file.getLineAndCharacterOfPosition(d.start);
      return `${block.file}:${block.line + 1 + line}: TS${d.code}: ${text}`;
    });
    return { block, jsFile: path.join(out, path.basename(file, '.ts') + '.js'), errors, isProgram: !exportsSomething(block.text) };
  });
}
