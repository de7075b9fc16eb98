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
    assert.deepEqual(names, ['AgentSources', 'Config', 'Environment', 'Hooks', 'Logger', 'ModelProviders', 'OperationEventRelay', 'Operations', 'Sandbox', 'Secrets', 'StepQueue', 'Store', 'ThreadHooks', 'ToolPolicies', 'ToolSources', 'UserDirectory', 'WebhookTransports']);
    for (const name of names) assert.equal((hookgate as Record<string, unknown>)[name], (hookgate.tokens as Record<string, unknown>)[name], name);
    assert.equal(hookgate.ToolSources.multi, true);
    assert.equal(hookgate.Store.multi, false);
  });

  it("document 001's agent API is exported from the root: start, dispatch, init, getAgentInstance and the typed errors with type and status", () => {
    for (const name of ['start', 'dispatch', 'init', 'getAgentInstance', 'parseDeliveredMessage'] as const) assert.equal(typeof hookgate[name], 'function', name);
    const errors: Array<[InstanceType<typeof hookgate.AgentApiError>, string, number]> = [
      [new hookgate.InvalidRequestError('x'), 'invalid_request', 400],
      [new hookgate.AgentInstanceNotFoundError('A', 'i', 'u'), 'agent_instance_not_found', 404],
      [new hookgate.AgentInstanceExistsError('A', 'i', 'u'), 'agent_instance_exists', 409],
      [new hookgate.AgentRunError('failed', 's', 'x'), 'agent_run_failed', 500],
      [new hookgate.SubmissionRetryExhaustedError('s', 3), 'submission_retry_exhausted', 500],
      [new hookgate.SubmissionTimeoutError('s', 10), 'submission_timeout', 500],
      [new hookgate.AgentRuntimeNotStartedError('x'), 'runtime_unavailable', 503],
      [new hookgate.ToolLegacyDefinitionError('t', 'tool "t"', 'execute'), 'tool_legacy_definition', 500],
      [new hookgate.ToolInputValidationError('t', [{ path: 'a', message: 'm' }]), 'tool_input_validation', 400],
      [new hookgate.ToolOutputValidationError('t', [{ path: 'a', message: 'm' }]), 'tool_output_validation', 500],
      [new hookgate.ToolOutputSerializationError('t', 'a function'), 'tool_output_serialization', 500],
      [new hookgate.ToolStepError('t', 'reused a name'), 'tool_step_invalid', 500],
      [new hookgate.ToolCallInterruptedError('t', 'call-1'), 'tool_call_interrupted', 500],
    ];
    for (const [err, type, status] of errors) {
      assert.ok(err instanceof hookgate.HookgateError && err instanceof Error);
      assert.deepEqual([err.type, err.status], [type, status], err.name);
    }
  });

  it('every name the root exports has TSDoc', () => {
    assert.deepEqual(undocumentedRootExports(), []);
  });
});
