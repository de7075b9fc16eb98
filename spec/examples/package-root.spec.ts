import assert from 'node:assert/strict';
import path from 'node:path';
import ts from 'typescript';
import * as hookgate from 'hookgate';
import { ROOT } from '../helpers/cli-process.js';

/** Names exported from the package root whose declaration (or export statement) has no TSDoc. */
function undocumentedRootExports(): string[] {
  const entry = path.join(ROOT, 'index.ts');
  const program = ts.createProgram([entry], {
    strict: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    experimentalDecorators: true,
    noEmit: true,
    types: ['node'],
    typeRoots: [path.join(ROOT, 'node_modules', '@types')],
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry)!)!;
  return checker
    .getExportsOfModule(module)
    .filter((symbol) => {
      // `export * as name`: the comment is on the export statement, not in the module it names.
      if (symbol.getDocumentationComment(checker).length > 0 || hasLeadingTsDoc(symbol.declarations?.[0])) return false;
      const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
      return target.getDocumentationComment(checker).length === 0;
    })
    .map((symbol) => symbol.name);
}

/** Whether the statement holding `declaration` (`export * as v from ...`) starts with a `/** ... *\/` comment. */
function hasLeadingTsDoc(declaration: ts.Declaration | undefined): boolean {
  if (!declaration || !ts.isNamespaceExport(declaration)) return false;
  const statement = declaration.parent;
  const text = statement.getSourceFile().getFullText();
  return (ts.getLeadingCommentRanges(text, statement.getFullStart()) ?? []).some((c) => text.startsWith('/**', c.pos));
}

/** The package root, `'hookgate'`: everything a plugin or an embedding script needs, documented (issue 10, typed library). */
describe('package root exports', function () {
  this.timeout(60_000);

  it("'hookgate' resolves to this package (package.json exports) and carries the kernel, plugin, policy and error API", () => {
    for (const name of ['createKernel', 'Kernel', 'definePlugin', 'createToken', 'definePolicy', 'HookgateError', 'isHookgateError', 'loadConfig', 'HOOK_TYPES'] as const) {
      assert.equal(typeof hookgate[name] === 'function' || Array.isArray(hookgate[name]), true, name);
    }
    assert.equal(hookgate.ERROR_CATALOG.OPERATION_NOT_DONE.category, 'user');
    assert.equal(typeof hookgate.v.object, 'function');
  });

  it('every service token is exported by name, the same object as in the tokens namespace', () => {
    const names = Object.keys(hookgate.tokens).sort();
    assert.deepEqual(names, ['AgentSources', 'Config', 'Environment', 'Hooks', 'Logger', 'ModelProviders', 'Operations', 'Secrets', 'Store', 'ToolPolicies', 'ToolSources', 'UserDirectory', 'WebhookTransports']);
    for (const name of names) assert.equal((hookgate as Record<string, unknown>)[name], (hookgate.tokens as Record<string, unknown>)[name], name);
    assert.equal(hookgate.ToolSources.multi, true);
    assert.equal(hookgate.Store.multi, false);
  });

  it('every name the root exports has TSDoc', () => {
    assert.deepEqual(undocumentedRootExports(), []);
  });
});
