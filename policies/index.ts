/** The policy engine: policy packs as files, decided in-process (see ARCHITECTURE.md, Policy-as-code). */
export { PolicyEngine, type PolicyEngineOptions, type ReloadResult } from './policy-engine.js';
export { definePolicy, type CodePolicyDefinition, type CodePolicyVerdict, type PolicyEventInput } from './define-policy.js';
export { loadPacks, findPackFiles, type LoadPacksResult, type LoadPacksOptions } from './load-packs.js';
export { PolicySet } from './policy-set.js';
export { PolicyPool } from './policy-pool.js';
export type { PolicyEvaluation } from './evaluate-decision.js';
export type { DecisionLog } from './decision-log.js';
export type { CompiledPack, CompiledPolicy, PolicyEffect, PolicyEventName, PolicyLoadError } from './policy-types.js';
export { formatLoadError, POLICY_EVENTS, POLICY_EFFECTS } from './policy-types.js';
export { policyCheck } from './cli/policy-check.js';
export { policyTest } from './cli/policy-test.js';
export { policyEval } from './cli/policy-eval.js';
export { decisionsQuery } from './cli/decisions-query.js';
export type { CliResult } from './cli/cli-support.js';
export { readToolCatalog, type ToolCatalog, type CatalogTool } from './authoring/tool-catalog.js';
export { lintPacks, type PolicyWarning } from './authoring/pack-lint.js';
export { explainEvent, type EventExplanation, type PolicyExplanation } from './authoring/explain-event.js';
export { measureCoverage, type CoverageReport, type PolicyCoverage } from './authoring/test-coverage.js';
