import type { Command } from 'commander';
import { loadConfig } from '../../config/load-config.js';
import type { HookgateConfig } from '../../config/defaults.js';
import type { Kernel } from '../../kernel/kernel.js';
import type { DecisionFilter } from '../../kernel/store.js';
import { decisionsQuery, policyCheck, policyEval, policyTest, type CliResult } from '../../policies/index.js';
import { policyPaths } from '../../config/policy-paths.js';
import { readToolCatalog } from '../../policies/authoring/tool-catalog.js';
import { resolvePlugins } from '../catalog.js';
import { resolveOperationId } from './id-prefix.js';
import { choiceOption, isoTime, wholeNumber } from './option-values.js';
import { storeName } from './store-name.js';

type WithKernel = (body: (kernel: Kernel) => Promise<number>) => Promise<number>;

/** Registers `hookgate policy check|test|eval` and `hookgate decisions`. */
export function addPolicyCommands(program: Command, withKernel: WithKernel): void {
  const config = (): HookgateConfig => loadConfig({ file: program.opts<{ config?: string }>().config });
  const pathsOr = (given: string[]) => (given.length > 0 ? given : policyPaths(config()));
  const settings = () => {
    const c = config().policies;
    return { deadlineMs: c.deadlineMs, defaultDecision: c.defaultDecision, maxWorkers: c.maxWorkers };
  };
  const print = (result: CliResult): number => {
    if (result.output) process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
    return result.exitCode;
  };

  const policy = program.command('policy').description('policy-as-code: check, test and try policy packs');
  policy
    .command('check')
    .description(
      'load every pack, compile every regex (re2) and JSONata expression; report all errors at once (exit 2); ' +
        'then warn about policies that cannot do what they say against the tool catalog of the configured plugins ' +
        '(a match no tool has, an args key or when path not in the tool\'s input schema, a when that can never hold)',
    )
    .argument('[paths...]', 'pack files or folders (default: policies.paths from the config)')
    .option('--strict', 'warnings are errors (exit 2)')
    .option('--json', 'print JSON: { ok, errors, warnings, packs, catalog }')
    .action(async (paths: string[], opts) => {
      const loaded = config();
      // The catalog of every plugin the config loads, plugins.extra modules included.
      const catalog = readToolCatalog(loaded, await resolvePlugins(loaded));
      program.setOptionValue('exitCode', print(await policyCheck(pathsOr(paths), { ...settings(), catalog, strict: opts.strict === true, json: opts.json === true })));
    });
  policy
    .command('test')
    .description("run the packs' inline tests like `opa test`: pass/fail per test, a diff on failure, exit 1 if any fails")
    .argument('[paths...]', 'pack files or folders (default: policies.paths from the config)')
    .option('--coverage', 'also report which policies, matchers and condition branches (and/or operands, ? : branches) the tests exercised')
    .option('--json', 'print JSON')
    .action(async (paths: string[], opts) => {
      program.setOptionValue('exitCode', print(await policyTest(pathsOr(paths), { ...settings(), json: opts.json, coverage: opts.coverage === true })));
    });
  policy
    .command('eval')
    .description('what the packs would decide for one event, and why')
    .requiredOption(
      '--event <file>',
      'a JSON event: { type, identifier, apiName, args?, result?, userId?, agentId?, canonical? }; type (or its other name event) is ' +
        'beforeToolCall, afterToolCall or onToolCallError; result ({ content, success? }) is for the result events',
    )
    .argument('[paths...]', 'pack files or folders (default: policies.paths from the config)')
    .option('--explain', 'for every policy on the event: matcher hits, the when value at each branch, the verdict, and how they combined')
    .option('--json', 'print JSON')
    .action(async (paths: string[], opts) => {
      program.setOptionValue('exitCode', print(await policyEval(pathsOr(paths), opts.event, { ...settings(), json: opts.json, explain: opts.explain === true })));
    });

  program
    .command('decisions')
    .description('query the policy decision log, newest first')
    .option('--operation <id>', 'one operation: its id or a unique prefix of it')
    .option('--policy <id>', 'decisions a policy took part in')
    .addOption(choiceOption('--effect <effect>', 'only decisions with this outcome', ['allow', 'deny', 'ask', 'redact']))
    .option('--since <time>', 'ISO 8601 time, inclusive (2026-05-01T12:00:00Z; a date alone is its midnight UTC)', isoTime)
    .option('--until <time>', 'ISO 8601 time, inclusive (a date alone is its midnight UTC)', isoTime)
    .option('--limit <n>', 'at most this many (1 to 10,000)', wholeNumber(1, 10_000), 50)
    .option('--json', 'print JSON')
    .action(async (opts) => {
      const filter: DecisionFilter = {
        ...(opts.policy ? { policyId: opts.policy } : {}),
        ...(opts.effect ? { decision: opts.effect } : {}),
        ...(opts.since ? { since: opts.since } : {}),
        ...(opts.until ? { until: opts.until } : {}),
        limit: opts.limit,
      };
      program.setOptionValue(
        'exitCode',
        await withKernel(async (k) => {
          if (opts.operation !== undefined) filter.operationId = await resolveOperationId(k.store, opts.operation, storeName(k.config));
          return print(await decisionsQuery(k.store, filter, { json: opts.json }));
        }),
      );
    });
}
