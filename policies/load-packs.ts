import { createHash } from 'node:crypto';
import { readFile, readdir, stat } from 'node:fs/promises';
import path from 'node:path';
import * as v from 'valibot';
import { parseYaml } from '../config/parse-yaml.js';
import { checkJsonata } from './jsonata-check.js';
import { issuesOf, packSchema, policySchema, testSchema, type RawPack, type RawPolicy, type RawTest } from './pack-schema.js';
import {
  ASK_ON_RESULT,
  POLICY_EFFECTS,
  POLICY_EVENTS,
  type ArgMatcher,
  type CompiledPack,
  type CompiledPolicy,
  type CompiledRedaction,
  type InlineTest,
  type PolicyEventName,
  type PolicyLoadError,
  type PolicyReason,
} from './policy-types.js';
import { compileRe2 } from './re2-compile.js';

/** What a code policy module declares about itself (read inside a worker). */
export interface CodePolicyDescription {
  id: string;
  events: string[];
  match?: string;
  /** The effects the module says `evaluate` may return (definePolicy `effects`), when it says. */
  effects?: string[];
}

export interface LoadPacksOptions {
  /**
   * Imports a code policy module (inside a worker: module code never runs in
   * the main thread) and returns its declaration. Without it, modules are
   * only checked to exist and their YAML entry must give `id` and `events`.
   */
  describeModule?: (absPath: string) => Promise<CodePolicyDescription>;
}

export interface LoadPacksResult {
  packs: CompiledPack[];
  errors: PolicyLoadError[];
}

const PACK_EXTENSIONS = new Set(['.yaml', '.yml']);

/**
 * Finds pack files under `paths` (files, or folders searched recursively for
 * `.yaml`/`.yml`), in a stable order. A missing path is an error.
 */
export async function findPackFiles(paths: readonly string[]): Promise<{ files: string[]; errors: PolicyLoadError[] }> {
  const files: string[] = [];
  const errors: PolicyLoadError[] = [];
  for (const p of paths) {
    const abs = path.resolve(p);
    try {
      const st = await stat(abs);
      if (st.isDirectory()) {
        const entries = await readdir(abs, { recursive: true, withFileTypes: true });
        const found = entries
          .filter((e) => e.isFile() && PACK_EXTENSIONS.has(path.extname(e.name)))
          .map((e) => path.join(e.parentPath, e.name))
          .sort();
        files.push(...found);
      } else {
        files.push(abs);
      }
    } catch (err) {
      errors.push({ file: abs, message: `cannot read: ${(err as Error).message}` });
    }
  }
  return { files: [...new Set(files)], errors };
}

/**
 * Loads, validates and compiles every pack under `paths`. Never throws for
 * pack problems: every error (file, policy id, field) is collected so one run
 * reports them all. Regexes compile with re2 and JSONata expressions compile
 * here; nothing from a pack executes in the calling thread.
 */
export async function loadPacks(paths: readonly string[], options: LoadPacksOptions = {}): Promise<LoadPacksResult> {
  const { files, errors } = await findPackFiles(paths);
  const packs: CompiledPack[] = [];
  for (const file of files) {
    const pack = await loadPackFile(file, errors, options);
    if (pack) packs.push(pack);
  }
  const owner = new Map<string, string>();
  for (const pack of packs) {
    for (const policy of pack.policies) {
      const first = owner.get(policy.id);
      if (first !== undefined) {
        errors.push({ file: pack.file, policyId: policy.id, field: 'id', message: `duplicate policy id (also in ${first})` });
      } else owner.set(policy.id, pack.file);
    }
  }
  return { packs, errors };
}

async function loadPackFile(file: string, errors: PolicyLoadError[], options: LoadPacksOptions): Promise<CompiledPack | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    errors.push({ file, message: `cannot read: ${(err as Error).message}` });
    return undefined;
  }
  const yaml = parseYaml(text);
  if (!yaml.ok) {
    errors.push({ file, message: yaml.message });
    return undefined;
  }
  const parsed = v.safeParse(packSchema, yaml.value);
  if (!parsed.success) {
    for (const i of issuesOf(parsed.issues)) errors.push({ file, field: i.field, message: i.message });
    return undefined;
  }
  const raw: RawPack = parsed.output;
  const name = raw.name ?? path.basename(file, path.extname(file));
  const hash = createHash('sha256').update(text);
  const errorCount = errors.length;
  const policies: CompiledPolicy[] = [];
  const pending: Array<{ index: number; raw: RawPolicy }> = [];

  raw.policies.forEach((item, index) => pending.push({ index, raw: item as RawPolicy }));
  // Module files feed the version, so editing a code policy reloads it in the workers.
  for (const { raw: item } of pending) {
    const mod = (item as { module?: unknown } | null)?.module;
    if (typeof mod === 'string') {
      try {
        hash.update(await readFile(path.resolve(path.dirname(file), mod)));
      } catch {
        // reported below with the policy
      }
    }
  }
  const version = hash.digest('hex').slice(0, 16);
  const ctx = { file, packName: name, version, defaults: raw.defaults ?? {} };

  for (const { index, raw: item } of pending) {
    const compiled = await compilePolicy(item, index, ctx, errors, options);
    if (compiled) policies.push(compiled);
  }
  const tests: InlineTest[] = policies.flatMap((p) => p.tests);
  (raw.tests ?? []).forEach((t, i) => {
    const r = v.safeParse(testSchema, t);
    if (!r.success) {
      for (const issue of issuesOf(r.issues, 'test')) errors.push({ file, field: `tests[${i}]${issue.field ? '.' + issue.field : ''}`, message: issue.message });
    } else {
      const test = toInlineTest(r.output, undefined, undefined, `${name} test ${i + 1}`);
      if (expectsAskOnResult(test)) errors.push({ file, field: `tests[${i}].expect.effect`, message: `${ASK_ON_RESULT} (this test's event is ${String(test.event.type)})` });
      tests.push(test);
    }
  });
  if (errors.length > errorCount) return undefined;
  return { name, description: raw.description, file, version, policies, tests };
}

interface PackContext {
  file: string;
  packName: string;
  version: string;
  defaults: { mode?: 'enforce' | 'shadow'; events?: PolicyEventName[] };
}

async function compilePolicy(
  item: unknown,
  index: number,
  ctx: PackContext,
  errors: PolicyLoadError[],
  options: LoadPacksOptions,
): Promise<CompiledPolicy | undefined> {
  const rawId = (item as { id?: unknown } | null)?.id;
  let policyId = typeof rawId === 'string' ? rawId : `policies[${index}]`;
  const before = errors.length;
  const fail = (field: string | undefined, message: string) => errors.push({ file: ctx.file, policyId, field, message });

  const parsed = v.safeParse(policySchema, item);
  if (!parsed.success) {
    for (const i of issuesOf(parsed.issues, 'policy')) fail(i.field, i.message);
    return undefined;
  }
  const raw = parsed.output;
  let events = raw.events as PolicyEventName[] | undefined;
  let matchSource = raw.match;
  let modulePath: string | undefined;
  let moduleEffects: readonly string[] | undefined;

  if (raw.module !== undefined) {
    modulePath = path.resolve(path.dirname(ctx.file), raw.module);
    for (const field of ['when', 'effect', 'reason', 'redact', 'args'] as const) {
      if (raw[field] !== undefined) fail(field, 'not allowed on a code policy: its module decides');
    }
    try {
      await stat(modulePath);
    } catch {
      fail('module', `module file not found: ${modulePath}`);
      return undefined;
    }
    if (options.describeModule) {
      try {
        const d = await options.describeModule(modulePath);
        if (raw.id !== undefined && raw.id !== d.id) fail('id', `does not match the module's definePolicy id "${d.id}"`);
        policyId = raw.id ?? d.id;
        const bad = d.events.filter((e) => !(POLICY_EVENTS as readonly string[]).includes(e));
        if (bad.length > 0) fail('module', `definePolicy events not supported: ${bad.join(', ')}`);
        events ??= d.events as PolicyEventName[];
        matchSource ??= d.match;
        if (d.effects !== undefined) {
          const badEffects = d.effects.filter((e) => !(POLICY_EFFECTS as readonly string[]).includes(e));
          if (badEffects.length > 0) fail('effects', `definePolicy effects not supported: ${badEffects.join(', ')}`);
          moduleEffects = d.effects;
        }
      } catch (err) {
        fail('module', `cannot load code policy: ${(err as Error).message}`);
        return undefined;
      }
    }
    if (raw.id === undefined && !options.describeModule) fail('id', 'required for a code policy when modules are not inspected');
  } else {
    if (raw.id === undefined) fail('id', 'required');
    if (raw.effect === undefined) fail('effect', 'required (allow, deny, ask or redact)');
    if (raw.effect === 'redact' && raw.redact === undefined) fail('redact', 'required when effect is redact');
    if (raw.effect !== undefined && raw.effect !== 'redact' && raw.redact !== undefined) fail('redact', 'only allowed when effect is redact');
  }

  events ??= ctx.defaults.events ?? (raw.effect === 'redact' ? ['afterToolCall'] : ['beforeToolCall']);
  if (raw.effect === 'redact' && events.includes('beforeToolCall')) fail('events', 'redact applies to results: use afterToolCall or onToolCallError');
  // A result is published once result control finishes; nothing can park it for a human, so ask would be logged and ignored.
  // A YAML effect holds for every listed event; a code policy's `effects` may hold for its beforeToolCall event only
  // (an ask it returns for a result fails closed in the worker), so it is refused when it lists no beforeToolCall.
  const resultEvents = events.filter((e) => e !== 'beforeToolCall');
  if (raw.effect === 'ask' && resultEvents.length > 0) fail('effect', `${ASK_ON_RESULT} (events: ${resultEvents.join(', ')})`);
  if (moduleEffects?.includes('ask') && resultEvents.length === events.length) fail('effects', `${ASK_ON_RESULT} (events: ${resultEvents.join(', ')})`);

  if (matchSource !== undefined) {
    // Compiled here only to refuse a pattern re2 cannot run; the policy set compiles all of them into one RE2.Set.
    try {
      compileRe2(matchSource);
    } catch (err) {
      fail('match', (err as Error).message);
    }
  }
  const args: ArgMatcher[] = [];
  for (const [key, pattern] of Object.entries(raw.args ?? {})) {
    try {
      args.push({ path: key.split('.'), source: pattern, re: compileRe2(pattern) });
    } catch (err) {
      fail(`args.${key}`, (err as Error).message);
    }
  }
  if (raw.when !== undefined) for (const p of checkJsonata(raw.when)) fail('when', p);
  let reason: PolicyReason | undefined;
  if (typeof raw.reason === 'string') reason = { text: raw.reason };
  else if (raw.reason !== undefined) {
    for (const p of checkJsonata(raw.reason.expr)) fail('reason.expr', p);
    reason = { expr: raw.reason.expr };
  }
  const redact: CompiledRedaction[] = [];
  const rawRedact = raw.redact === undefined ? [] : Array.isArray(raw.redact) ? raw.redact : [raw.redact];
  rawRedact.forEach((r, i) => {
    const field = Array.isArray(raw.redact) ? `redact[${i}].pattern` : 'redact.pattern';
    try {
      redact.push({ source: r.pattern, re: compileRe2(r.pattern, 'g' + (r.flags ?? '')), replacement: r.replacement });
    } catch (err) {
      fail(field, (err as Error).message);
    }
  });
  const tests = (raw.tests ?? []).map((t, i) => toInlineTest(t, policyId, events[0], `${policyId} test ${i + 1}`));
  tests.forEach((t, i) => {
    if (expectsAskOnResult(t)) fail(`tests[${i}].expect.effect`, `${ASK_ON_RESULT} (this test's event is ${String(t.event.type)})`);
  });
  if (errors.length > before) return undefined;

  return {
    id: policyId,
    description: raw.description,
    packName: ctx.packName,
    packFile: ctx.file,
    packVersion: ctx.version,
    events: new Set(events),
    matchSource,
    args,
    when: raw.when,
    effect: raw.effect,
    reason,
    redact,
    mode: raw.mode ?? ctx.defaults.mode ?? 'enforce',
    module: modulePath,
    tests,
    needsWorker: raw.when !== undefined || (reason !== undefined && 'expr' in reason) || modulePath !== undefined,
  };
}

/** A test that expects `ask` for a result: no policy can produce it, so it could only ever fail. */
function expectsAskOnResult(t: InlineTest): boolean {
  return t.expect.effect === 'ask' && (t.event.type === 'afterToolCall' || t.event.type === 'onToolCallError');
}

/** `fallbackName` names a test that has no `name` by its place. */
function toInlineTest(t: RawTest, policyId: string | undefined, defaultType: PolicyEventName = 'beforeToolCall', fallbackName = 'test'): InlineTest {
  const event = { type: defaultType, ...t.event };
  return { name: t.name ?? fallbackName, policyId, event, expect: { effect: t.expect.effect, reason: t.expect.reason, content: t.expect.content } };
}
