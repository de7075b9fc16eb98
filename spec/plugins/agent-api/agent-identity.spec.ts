import assert from 'node:assert/strict';
import * as v from 'valibot';
import { DEFAULT_DURABILITY, type Agent } from '../../../plugins/agent-api/agent.js';
import { InvalidRequestError } from '../../../plugins/agent-api/agent-errors.js';
import { createAgentDirectory, resolveAgentIdentity, validateAgentStatics } from '../../../plugins/agent-api/agent-identity.js';

function agentNamed(name: string, statics: Partial<Agent> = {}): Agent {
  const fn = (() => undefined) as unknown as Agent;
  Object.defineProperty(fn, 'name', { value: name });
  return Object.assign(fn, statics);
}

const invalid = (pattern: RegExp) => (err: unknown) => err instanceof InvalidRequestError && err.type === 'invalid_request' && err.status === 400 && pattern.test(err.message);

/** Document 001 "The 'use agent' directive", "Agent statics", "DurabilityConfig": identities and statics, checked before anything runs. */
describe('agent API: agent identity and statics', () => {
  describe('resolveAgentIdentity', () => {
    it('takes the entry name, else the agentName static, else the function name', () => {
      function IssueTriage() {}
      assert.equal(resolveAgentIdentity(IssueTriage as Agent), 'IssueTriage');
      assert.equal(resolveAgentIdentity(Object.assign(IssueTriage, { agentName: 'issue-triage' }) as Agent), 'issue-triage');
      assert.equal(resolveAgentIdentity(IssueTriage as Agent, 'triage-v2'), 'triage-v2');
    });

    for (const bad of ['9lives', 'has:colon', 'trailing-', 'double--dash', 'sp ace', '-lead', 'ünïcode', 'a_b']) {
      it(`refuses the identity "${bad}" (AGENT_IDENTITY_PATTERN)`, () => {
        assert.throws(() => resolveAgentIdentity(agentNamed(bad)), invalid(/is not valid: a PascalCase name or a kebab-case override/));
      });
    }

    it('refuses an anonymous function with no agentName and no entry name', () => {
      assert.throws(() => resolveAgentIdentity(agentNamed('')), invalid(/anonymous agent function has no identity/));
    });

    it('refuses an invalid agentName even when the function name is valid, and a non-function', () => {
      assert.throws(() => resolveAgentIdentity(agentNamed('Good', { agentName: 'bad:name' })), invalid(/"bad:name" \(the agentName static\)/));
      assert.throws(() => resolveAgentIdentity({} as Agent), invalid(/an agent is a function; got object/));
      assert.throws(() => resolveAgentIdentity(agentNamed('Good', { agentName: 7 as unknown as string })), invalid(/agentName static of an agent must be a string/));
    });

    it('escapes control characters of a hostile name in the message', () => {
      assert.throws(() => resolveAgentIdentity(agentNamed('a\nb\u0000')), (err: Error) => err.message.includes('a\\nb\\u0000') && !err.message.includes('\n'));
    });
  });

  describe('validateAgentStatics', () => {
    it('fills the durability defaults (10 attempts, one hour)', () => {
      assert.deepEqual(validateAgentStatics(agentNamed('A'), 'A'), { maxAttempts: 10, timeoutMs: 3_600_000 });
      assert.deepEqual(validateAgentStatics(agentNamed('A', { durability: { maxAttempts: 3 } }), 'A'), { ...DEFAULT_DURABILITY, maxAttempts: 3 });
    });

    for (const [what, durability, pattern] of [
      ['an unknown field', { maxAttempts: 2, retries: 5 }, /durability has an unknown field "retries"/],
      ['zero attempts', { maxAttempts: 0 }, /durability\.maxAttempts must be a positive integer; got 0/],
      ['a fractional timeout', { timeoutMs: 1.5 }, /durability\.timeoutMs must be a positive integer; got 1\.5/],
      ['a string', { timeoutMs: '60000' }, /durability\.timeoutMs must be a positive integer; got "60000"/],
      ['Infinity', { timeoutMs: Infinity }, /durability\.timeoutMs must be a positive integer/],
      ['not an object', 5, /the durability static must be an object; got 5/],
      ['null', null, /the durability static must be an object; got null/],
    ] as const) {
      it(`refuses durability with ${what}, naming the agent`, () => {
        assert.throws(() => validateAgentStatics(agentNamed('A', { durability: durability as never }), 'A'), invalid(new RegExp(`agent "A": ${pattern.source}`)));
      });
    }

    it('takes a valibot initialData schema and refuses anything else', () => {
      assert.doesNotThrow(() => validateAgentStatics(agentNamed('A', { initialData: v.object({ issue: v.number() }) }), 'A'));
      assert.throws(() => validateAgentStatics(agentNamed('A', { initialData: { type: 'object' } as never }), 'A'), invalid(/initialData static must be a valibot schema/));
    });
  });

  describe('createAgentDirectory', () => {
    it('registers by identity, never by position, and answers both ways', () => {
      const Support = agentNamed('Support');
      const triage = agentNamed('Whatever', { agentName: 'triage' });
      const inline = agentNamed('');
      const directory = createAgentDirectory([Support, { agent: triage }, { agent: inline, name: 'inline-one' }]);
      assert.deepEqual(directory.identities(), ['Support', 'triage', 'inline-one']);
      assert.equal(directory.byIdentity('triage'), triage);
      assert.equal(directory.identityOf(inline), 'inline-one');
      assert.equal(directory.byIdentity('Unknown'), undefined);
      assert.equal(directory.identityOf(agentNamed('Support')), undefined, 'another function with the same name is not registered');
    });

    it('refuses two agents with one identity', () => {
      assert.throws(() => createAgentDirectory([agentNamed('Support'), { agent: agentNamed('Other'), name: 'Support' }]), invalid(/agents\[1\]: two agents have the identity "Support"/));
    });

    it('refuses one function under two identities', () => {
      const Support = agentNamed('Support');
      assert.throws(() => createAgentDirectory([Support, { agent: Support, name: 'support-2' }]), invalid(/registered as "Support" and "support-2"/));
    });

    it('refuses an empty list, a malformed entry and bad statics', () => {
      assert.throws(() => createAgentDirectory([]), invalid(/non-empty list/));
      assert.throws(() => createAgentDirectory([{ agent: 'Support' as never }]), invalid(/agents\[0\]\.agent must be an agent function/));
      assert.throws(() => createAgentDirectory([{ agent: agentNamed('A'), label: 'x' } as never]), invalid(/agents\[0\]: unknown field "label"/));
      assert.throws(() => createAgentDirectory([agentNamed('A', { durability: { maxAttempts: -1 } })]), invalid(/durability\.maxAttempts/));
    });
  });
});
