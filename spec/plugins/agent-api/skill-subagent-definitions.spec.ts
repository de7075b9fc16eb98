import assert from 'node:assert/strict';
import type { Agent } from '../../../plugins/agent-api/agent.js';
import { AgentRenderError, ResourceNameConflictError, SkillDefinitionValidationError, SubagentDefinitionValidationError, ToolNameConflictError } from '../../../plugins/agent-api/agent-errors.js';
import { defineSkill, skillPathProblem, type SkillDefinition } from '../../../plugins/agent-api/define-skill.js';
import { defineSubagent, GeneralSubagent, type SubagentDefinition } from '../../../plugins/agent-api/define-subagent.js';
import { renderAgent } from '../../../plugins/agent-api/render-agent.js';
import { baselineFor } from '../../../plugins/agent-api/agent-resources.js';
import { useModel } from '../../../plugins/agent-api/use-model.js';
import { useSkill } from '../../../plugins/agent-api/use-skill.js';
import { useSubagent } from '../../../plugins/agent-api/use-subagent.js';
import { useTool } from '../../../plugins/agent-api/use-tool.js';
import * as root from '../../../index.js';

const base = { name: 'refunds', description: 'Process refund requests against the orders API.', instructions: 'Check the order, then refund.' };
const child = () => 'You research.';

/** The issues of a refused skill definition, as [field, message] pairs. */
function skillIssues(definition: unknown): Array<[string, string]> {
  try {
    defineSkill(definition as SkillDefinition);
  } catch (err) {
    assert.ok(err instanceof SkillDefinitionValidationError, `expected SkillDefinitionValidationError, got ${String(err)}`);
    assert.equal(err.code, 'SKILL_DEFINITION_INVALID');
    assert.equal(err.status, 400);
    return err.issues.map((i) => [i.field, i.message]);
  }
  assert.fail('defineSkill accepted it');
}

function subagentIssues(definition: unknown): Array<[string, string]> {
  try {
    defineSubagent(definition as SubagentDefinition);
  } catch (err) {
    assert.ok(err instanceof SubagentDefinitionValidationError, `expected SubagentDefinitionValidationError, got ${String(err)}`);
    assert.equal(err.code, 'SUBAGENT_DEFINITION_INVALID');
    return err.issues.map((i) => [i.field, i.message]);
  }
  assert.fail('defineSubagent accepted it');
}

describe('agent API: defineSkill / defineSubagent validation', () => {
  describe('defineSkill', () => {
    it('is exported from the package root with its error class', () => {
      assert.equal(root.defineSkill, defineSkill);
      assert.equal(root.SkillDefinitionValidationError, SkillDefinitionValidationError);
      assert.equal(root.useSkill, useSkill);
    });

    it('returns a frozen copy: later changes to the caller’s object, metadata, files or bytes change nothing', () => {
      const bytes = new Uint8Array([1, 2, 3]);
      const metadata: Record<string, string> = { owner: 'billing' };
      const files: Record<string, string | Uint8Array> = { 'refs/policy.md': 'Refund within 30 days.', 'data/table.bin': bytes };
      const input = { ...base, license: 'MIT', compatibility: 'node >= 20', metadata, allowedTools: 'agent/lookup', files };
      const skill = defineSkill(input);
      assert.ok(Object.isFrozen(skill) && Object.isFrozen(skill.files) && Object.isFrozen(skill.metadata));
      input.name = 'changed';
      metadata.owner = 'someone';
      files['evil.md'] = 'x';
      bytes[0] = 99;
      assert.equal(skill.name, 'refunds');
      assert.equal(skill.metadata!.owner, 'billing');
      assert.deepEqual(Object.keys(skill.files!), ['refs/policy.md', 'data/table.bin']);
      assert.deepEqual([...(skill.files!['data/table.bin'] as Uint8Array)], [1, 2, 3]);
      assert.equal(defineSkill(skill), skill, 'a defined skill is returned as it is');
    });

    it('refuses a definition that is not an object', () => {
      for (const bad of [null, undefined, 'refunds', 7, [base]]) assert.equal(skillIssues(bad)[0]![0], '(definition)');
    });

    it('refuses names that are not 1-64 lowercase letters, digits and single hyphens', () => {
      for (const name of ['', 'Refunds', 'a--b', '-a', 'a-', 'a_b', 'a.b', 'a b', 'r\u00e9fund', 'x'.repeat(65), 'a\nb']) {
        const issues = skillIssues({ ...base, name });
        assert.deepEqual(issues.map((i) => i[0]), ['name'], `name ${JSON.stringify(name)}`);
      }
      assert.match(skillIssues({ ...base, name: 42 })[0]![1], /must be a string, got number/);
      assert.doesNotThrow(() => defineSkill({ ...base, name: 'x'.repeat(64) }));
    });

    it('refuses a missing, blank or too long description and missing or blank instructions', () => {
      assert.deepEqual(skillIssues({ name: 'a' }), [
        ['description', 'is required'],
        ['instructions', 'is required'],
      ]);
      assert.deepEqual(skillIssues({ ...base, description: '  ', instructions: '\n' }), [
        ['description', 'must not be empty'],
        ['instructions', 'must not be empty: a skill is its content'],
      ]);
      assert.match(skillIssues({ ...base, description: 'd'.repeat(1025) })[0]![1], /at most 1024 characters \(got 1025\)/);
      assert.doesNotThrow(() => defineSkill({ ...base, description: 'd'.repeat(1024) }));
    });

    it('refuses optional fields of the wrong type, a compatibility over 500 characters, non-string metadata and unknown fields', () => {
      const issues = skillIssues({ ...base, license: 1, compatibility: 'c'.repeat(501), allowedTools: ['a'], metadata: { ok: 'yes', n: 1, '': 'x' }, tools: [] });
      assert.deepEqual(issues.map((i) => i[0]), ['"tools"', 'license', 'compatibility', 'allowedTools', 'metadata["n"]', 'metadata']);
      assert.equal(skillIssues({ ...base, metadata: ['a'] })[0]![0], 'metadata');
    });

    it('refuses every unsafe file path, naming the path and why', () => {
      const cases: Array<[string, RegExp]> = [
        ['', /is empty/],
        ['/etc/passwd', /is absolute/],
        ['../secrets', /"\." or "\.\." segment/],
        ['a/../../b', /"\." or "\.\." segment/],
        ['./a.md', /"\." or "\.\." segment/],
        ['a//b', /empty segment/],
        ['dir/', /empty segment/],
        ['a\\b', /backslash/],
        ['..\\..\\win.ini', /backslash/],
        ['C:/x', /":"/],
        ['a.txt:stream', /":"/],
        ['a\u0000b', /control character/],
        ['a\nb', /control character/],
        ['a\u007fb', /control character/],
        ['bad\uD800', /lone surrogate/],
        ['...', /only dots and spaces/],
        ['a/. /b', /only dots and spaces/],
        ['SKILL.md', /SKILL\.md/],
        ['skill.MD', /SKILL\.md/],
        ['p'.repeat(1025), /longer than 1024/],
      ];
      for (const [path, why] of cases) {
        assert.match(skillPathProblem(path) ?? 'accepted', why, `path ${JSON.stringify(path)}`);
        const issues = skillIssues({ ...base, files: { [path]: 'x' } });
        assert.equal(issues.length, 1);
        assert.equal(issues[0]![0], `files[${JSON.stringify(path.length > 80 ? `${path.slice(0, 80)}…` : path)}]`);
        assert.match(issues[0]![1], why);
      }
      for (const ok of ['a.md', 'refs/policy.md', '.hidden/config', 'a/b/c/d.txt', 'SKILL.md.bak', 'docs/SKILL.md', 'ünïcode.md']) assert.equal(skillPathProblem(ok), undefined, ok);
    });

    it('refuses paths that collide by case or Unicode normalization, a file that is also a folder, content that is neither string nor bytes, and files that are not a plain object', () => {
      assert.match(skillIssues({ ...base, files: { 'Notes.md': 'a', 'notes.md': 'b' } })[0]![1], /collides with "Notes\.md"/);
      assert.match(skillIssues({ ...base, files: { 'caf\u00e9.md': 'a', 'cafe\u0301.md': 'b' } })[0]![1], /collides/);
      assert.match(skillIssues({ ...base, files: { refs: 'a', 'refs/b.md': 'b' } })[0]![1], /is a file and also the folder of "refs\/b\.md"/);
      assert.match(skillIssues({ ...base, files: { 'a.md': 42 } })[0]![1], /string or a Uint8Array, got number/);
      assert.match(skillIssues({ ...base, files: { 'a.md': { text: 'x' } } })[0]![1], /got object/);
      assert.match(skillIssues({ ...base, files: [['a.md', 'x']] })[0]![1], /got an array/);
      assert.match(skillIssues({ ...base, files: new Map([['a.md', 'x']]) })[0]![1], /got a Map/);
    });

    it('reports every issue at once and never echoes a raw control character', () => {
      const err = (() => {
        try {
          defineSkill({ name: 'Bad\u001b[31m', description: '', instructions: '', files: { '/abs': 'x', '../up': 'y' } } as SkillDefinition);
        } catch (e) {
          return e as SkillDefinitionValidationError;
        }
        return assert.fail('accepted');
      })();
      assert.equal(err.issues.length, 5);
      assert.ok(!err.message.includes('\u001b'), 'the escape character is JSON-escaped');
      assert.match(err.message, /^defineSkill\("Bad\\u001b\[31m"\): name: /);
    });
  });

  describe('defineSubagent', () => {
    it('returns a frozen copy; a spread with overrides validates again', () => {
      const input = { name: 'researcher', description: 'Finds facts.', agent: child };
      const researcher = defineSubagent(input);
      assert.ok(Object.isFrozen(researcher));
      input.name = 'changed';
      assert.equal(researcher.name, 'researcher');
      const faster = defineSubagent({ ...researcher, model: 'recorded/fast', thinkingLevel: 'low' });
      assert.deepEqual(faster.model, { provider: 'recorded', name: 'fast' });
      assert.equal(faster.thinkingLevel, 'low');
      assert.equal(root.defineSubagent, defineSubagent);
      assert.equal(root.GeneralSubagent, GeneralSubagent);
    });

    it('refuses bad names, descriptions, agents, models, thinking levels and unknown fields, all at once', () => {
      assert.deepEqual(subagentIssues({ name: 'Research Bot', description: '', agent: 'Researcher', model: 'no-slash', thinkingLevel: 'max', tools: [] }).map((i) => i[0]), [
        '"tools"',
        'name',
        'description',
        'agent',
        'model',
        'thinkingLevel',
      ]);
      assert.deepEqual(subagentIssues({}).map((i) => i[1]), [
        'must be a string, got undefined',
        'is required',
        'is required (the agent function of the delegate)',
      ]);
      assert.equal(subagentIssues(null)[0]![0], '(definition)');
      assert.match(subagentIssues({ name: 'a', description: 'd'.repeat(1025), agent: child })[0]![1], /at most 1024/);
      assert.match(subagentIssues({ name: 'a', description: 'd', agent: child, model: { name: 'x' } })[0]![1], /provider must be a non-empty string/);
    });

    it('reserves flue-general for GeneralSubagent’s own agent function; spreading GeneralSubagent with a model override is fine', () => {
      assert.match(subagentIssues({ name: 'flue-general', description: 'mine', agent: child })[0]![1], /reserved for GeneralSubagent/);
      assert.equal(GeneralSubagent.name, 'flue-general');
      assert.ok(Object.isFrozen(GeneralSubagent));
      assert.doesNotThrow(() => defineSubagent({ ...GeneralSubagent, model: 'recorded/small' }));
    });
  });

  describe('useSkill / useSubagent in a render', () => {
    const faq = defineSkill({ name: 'faq', description: 'Answers common questions.', instructions: 'Use the FAQ.' });
    const researcher = defineSubagent({ name: 'researcher', description: 'Finds facts.', agent: child });

    it('the render result lists the declared skills and subagents as catalog entries (name, description), in order', () => {
      const Agent1 = () => {
        useModel('recorded/x');
        useSkill(faq);
        useSkill({ ...base });
        useSubagent(researcher);
        useSubagent(GeneralSubagent);
      };
      const rendered = renderAgent(Agent1 as Agent);
      assert.deepEqual(rendered.resources, {
        skills: [
          { name: 'faq', description: 'Answers common questions.' },
          { name: 'refunds', description: base.description },
        ],
        subagents: [
          { name: 'researcher', description: 'Finds facts.' },
          { name: 'flue-general', description: GeneralSubagent.description },
        ],
      });
      assert.ok(Object.isFrozen(rendered.resources.skills[0]));
      assert.deepEqual(renderAgent((() => void useModel('recorded/x')) as Agent).resources, { skills: [], subagents: [] });
    });

    it('a second skill or subagent of one name throws ResourceNameConflictError; an invalid inline one its validation error', () => {
      assert.throws(() => renderAgent((() => (useModel('recorded/x'), useSkill(faq), useSkill({ ...faq }))) as Agent), (e: unknown) => e instanceof ResourceNameConflictError && e.kind === 'skill' && e.resourceName === 'faq');
      assert.throws(
        () => renderAgent((() => (useModel('recorded/x'), useSubagent(researcher), useSubagent({ ...researcher, description: 'other' }))) as Agent),
        (e: unknown) => e instanceof ResourceNameConflictError && e.kind === 'subagent',
      );
      assert.throws(() => renderAgent((() => (useModel('recorded/x'), useSkill({ name: 'BAD' } as SkillDefinition))) as Agent), SkillDefinitionValidationError);
    });

    it('a useTool named activate_skill or task conflicts with the injected tool only while a skill or subagent is declared', () => {
      const tool = (name: string) => ({ name, description: 'mine', run: () => 1 });
      assert.throws(() => renderAgent((() => (useModel('recorded/x'), useTool(tool('activate_skill')), useSkill(faq))) as Agent), ToolNameConflictError);
      assert.throws(() => renderAgent((() => (useModel('recorded/x'), useTool(tool('task')), useSubagent(researcher))) as Agent), ToolNameConflictError);
      assert.doesNotThrow(() => renderAgent((() => (useModel('recorded/x'), useTool(tool('task')), useSkill(faq))) as Agent));
    });

    it('outside a render both hooks throw, naming themselves', () => {
      assert.throws(() => useSkill(faq), (e: unknown) => e instanceof AgentRenderError && /useSkill\(\) was called outside an agent render/.test(e.message));
      assert.throws(() => useSubagent(researcher), /useSubagent\(\) was called outside/);
    });

    it('the catalog baseline is kept until a compaction, then retaken from the render of that moment', () => {
      let withRefunds = false;
      const Flip = () => {
        useModel('recorded/x');
        useSkill(faq);
        if (withRefunds) useSkill({ ...base });
      };
      const first = baselineFor(undefined, renderAgent(Flip as Agent), 0);
      withRefunds = true;
      const later = renderAgent(Flip as Agent);
      assert.equal(baselineFor(first, later, 0), first, 'no compaction: the same baseline');
      assert.deepEqual(baselineFor(first, later, 1).skills.map((s) => s.name), ['faq', 'refunds'], 'after a compaction: the current set');
    });

    it('a subagent render may declare skills and subagents of its own', () => {
      const rendered = renderAgent((() => (useSkill(faq), useSubagent(researcher), 'Delegate.')) as Agent, { kind: 'subagent' });
      assert.deepEqual(rendered.resources.skills.map((s) => s.name), ['faq']);
      assert.deepEqual(rendered.resources.subagents.map((s) => s.name), ['researcher']);
    });
  });
});
