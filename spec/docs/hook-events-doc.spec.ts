import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { HOOK_TYPES } from '../../kernel/hooks/hook-types.js';
import { ROOT } from '../helpers/cli-process.js';
import { collapse, readDeclaredTypes, type DeclaredField } from './event-types.js';
import { readDocSections, type DocField, type DocSection } from './field-tables.js';
import { readFencedBlocks } from './fenced-blocks.js';

/*
 * docs/hook-events.md against the types: for each hook type the interface
 * `<Type>Event` (beforeStep -> BeforeStepEvent) is read with the TypeScript
 * compiler from kernel/hooks/hook-types.ts, inherited fields included, and its
 * fields must be exactly the doc's (the section's own table plus the shared
 * tables its "Fields:" line links), with the same optionality and declared
 * type. Every type a field refers to that the kernel declares needs a section
 * of its own, checked the same way. Works on the event interfaces only, so it
 * does not depend on how AgentHook or HookEventMap are written.
 */

const DOC = 'docs/hook-events.md';
const SOURCES = [path.join(ROOT, 'kernel', 'hooks', 'hook-types.ts')];

function eventInterface(type: string): string {
  return `${type[0]!.toUpperCase()}${type.slice(1)}Event`;
}

function describeField(f: { name: string; optional: boolean; type: string }): string {
  return `${f.name}${f.optional ? '?' : ''}: ${f.type}`;
}

/** Differences between the declared fields and the documented ones, as readable lines. */
function compare(what: string, declared: DeclaredField[], documented: DocField[]): string[] {
  const problems: string[] = [];
  const docByName = new Map<string, DocField>();
  for (const f of documented) {
    if (docByName.has(f.name)) problems.push(`${what}: \`${f.name}\` is documented twice (line ${f.line})`);
    docByName.set(f.name, f);
  }
  for (const d of declared) {
    const f = docByName.get(d.name);
    if (!f) {
      problems.push(`${what}: \`${describeField(d)}\` is in the types but not in ${DOC}`);
      continue;
    }
    if (f.optional !== d.optional || collapse(f.type) !== d.type) {
      problems.push(`${what}: ${DOC}:${f.line} says \`${describeField({ ...f, type: collapse(f.type) })}\`, the types say \`${describeField(d)}\``);
    }
    if (f.meaning.trim() === '') problems.push(`${what}: \`${d.name}\` (line ${f.line}) has no meaning`);
  }
  const names = new Set(declared.map((d) => d.name));
  for (const f of documented) if (!names.has(f.name)) problems.push(`${what}: ${DOC}:${f.line} documents \`${f.name}\`, which the types do not have`);
  return problems;
}

describe(`${DOC}: every hook event field, checked against the types`, function () {
  this.timeout(60_000);
  const markdown = fs.readFileSync(path.join(ROOT, DOC), 'utf8');
  const sections = readDocSections(markdown);
  const byHeading = new Map(sections.map((s) => [s.heading, s]));
  const byAnchor = new Map(sections.map((s) => [s.anchor, s]));
  let types: ReturnType<typeof readDeclaredTypes>;
  before(() => {
    types = readDeclaredTypes(SOURCES);
  });

  const documentedFields = (section: DocSection): DocField[] => [
    ...section.includes.flatMap((anchor) => {
      const shared = byAnchor.get(anchor);
      assert.ok(shared, `${DOC}:${section.line}: "Fields:" links #${anchor}, which is no section`);
      return shared.fields;
    }),
    ...section.fields,
  ];

  it('has one section per hook type, and no section for a type that does not exist', () => {
    const documented = sections.filter((s) => /^`[a-z]\w*`$/.test(s.heading) && s.line > (byHeading.get('Events')?.line ?? Infinity) && s.line < (byHeading.get('Types the fields use')?.line ?? Infinity));
    assert.deepEqual(documented.map((s) => s.heading.slice(1, -1)), [...HOOK_TYPES]);
  });

  for (const type of HOOK_TYPES) {
    it(`\`${type}\`: the fields of ${eventInterface(type)} and no others`, () => {
      const section = byHeading.get(`\`${type}\``);
      assert.ok(section, `${DOC} has no section "### \`${type}\`"`);
      const declared = types.fields(eventInterface(type));
      assert.ok(declared, `kernel/hooks/hook-types.ts declares no interface ${eventInterface(type)} for the hook type ${type}`);
      assert.ok(declared.length > 0);
      assert.deepEqual(compare(type, declared, documentedFields(section)), []);
    });
  }

  it('documents every kernel type an event field refers to, and each matches its declaration', () => {
    const problems: string[] = [];
    const seen = new Set<string>();
    const queue = HOOK_TYPES.flatMap((t) => types.fields(eventInterface(t)) ?? []).flatMap((f) => f.references);
    while (queue.length > 0) {
      const name = queue.shift()!;
      if (seen.has(name) || !types.declares(name)) continue; // Record, Array, Partial...: TypeScript's own
      seen.add(name);
      const section = byHeading.get(`\`${name}\``);
      if (!section) {
        problems.push(`${name} is used by an event field but has no section "### \`${name}\`" in ${DOC}`);
        continue;
      }
      const fields = types.fields(name);
      if (fields) {
        problems.push(...compare(name, fields, section.fields));
        queue.push(...fields.flatMap((f) => f.references));
      } else {
        const aliased = types.alias(name)!;
        if (!section.codeSpans.some((c) => collapse(c) === aliased)) problems.push(`${DOC}:${section.line}: the section on ${name} should show its type \`${aliased}\``);
        queue.push(...[...aliased.matchAll(/\b[A-Z]\w*/g)].map((m) => m[0]));
      }
    }
    assert.ok(seen.has('ToolResult') && seen.has('Usage'), [...seen].join(', '));
    assert.deepEqual(problems, []);
  });

  it('shows a webhook payload example whose keys are beforeToolCall fields or payload additions', () => {
    const [example] = readFencedBlocks(ROOT, DOC).filter((b) => b.lang === 'json' && b.section === 'Webhook payloads');
    assert.ok(example, `${DOC} has no json example under "Webhook payloads"`);
    const payload = JSON.parse(example.text) as Record<string, unknown>;
    const allowed = new Set([...(types.fields('BeforeToolCallEvent') ?? []).map((f) => f.name).filter((n) => n !== 'mock'), 'hookId', 'hookType', 'userEmail']);
    assert.deepEqual(Object.keys(payload).filter((k) => !allowed.has(k)), []);
    assert.equal(payload.hookType, 'beforeToolCall');
    const required = (types.fields('BeforeToolCallEvent') ?? []).filter((f) => !f.optional && f.name !== 'mock').map((f) => f.name);
    assert.deepEqual(required.filter((n) => !(n in payload)), []);
  });
});
