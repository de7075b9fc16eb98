import assert from 'node:assert/strict';
import { HookgateError } from '../../kernel/errors.js';
import type { ModelProvider } from '../../kernel/model.js';
import { parseModelSpecifier, resolveModelProvider } from '../../kernel/index.js';

const provider = (name: string): ModelProvider => ({ name, complete: async () => ({ text: '', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 }, finishReason: 'stop' }) });

function refused(value: unknown, why: RegExp): void {
  assert.throws(
    () => parseModelSpecifier(value),
    (err: unknown) => err instanceof HookgateError && err.code === 'MODEL_SPECIFIER_INVALID' && why.test(err.message),
  );
}

describe('kernel/model-specifier: useModel("provider/model")', () => {
  it('splits "openai/gpt-4o-mini" into provider and model name', () => {
    assert.deepEqual(parseModelSpecifier('openai/gpt-4o-mini'), { provider: 'openai', name: 'gpt-4o-mini' });
    assert.deepEqual(parseModelSpecifier('anthropic/claude-sonnet-4'), { provider: 'anthropic', name: 'claude-sonnet-4' });
  });

  it('splits at the first "/" only, so a model name may hold slashes', () => {
    assert.deepEqual(parseModelSpecifier('openai/meta-llama/Llama-3.1-8B-Instruct'), { provider: 'openai', name: 'meta-llama/Llama-3.1-8B-Instruct' });
    assert.deepEqual(parseModelSpecifier('openai//x'), { provider: 'openai', name: '/x' });
  });

  it('refuses a specifier without "/", quoting it', () => {
    refused('gpt-4o-mini', /"gpt-4o-mini".*no "\/" between the provider and the model name/);
  });

  it('refuses an empty provider or an empty model name', () => {
    refused('/gpt-4o', /provider part before "\/" is empty/);
    refused('openai/', /model name after "\/" is empty/);
    refused('', /no "\/"/);
  });

  it('refuses a provider part that is no provider name', () => {
    refused('OpenAI/gpt-4o', /"OpenAI" is not a provider name/);
    refused('open.ai/gpt-4o', /not a provider name/);
    refused('1ai/x', /not a provider name/);
  });

  it('refuses whitespace, control characters, non-strings and huge values', () => {
    refused(' openai/gpt-4o', /whitespace or control characters/);
    refused('openai/gpt-4o\n', /whitespace or control characters/);
    refused('openai/gpt\u00004o', /whitespace or control characters/);
    refused(undefined, /expected a string "provider\/model", got undefined/);
    refused(null, /got null/);
    refused({ provider: 'openai' }, /got object/);
    refused(`openai/${'x'.repeat(600)}`, /longer than 512 characters/);
  });

  it('resolves the specifier to a bound provider by name, from a list or a map', () => {
    const openai = provider('openai');
    const providers = [provider('scripted'), openai, provider('anthropic')];
    assert.equal(resolveModelProvider(parseModelSpecifier('openai/gpt-4o-mini'), providers), openai);
    assert.equal(resolveModelProvider(parseModelSpecifier('openai/gpt-4o-mini'), new Map(providers.map((p) => [p.name, p]))), openai);
  });

  it('throws MODEL_NOT_FOUND naming the specifier and the providers on offer when none has the name', () => {
    assert.throws(
      () => resolveModelProvider(parseModelSpecifier('mistral/large'), [provider('scripted'), provider('openai')]),
      (err: unknown) =>
        err instanceof HookgateError &&
        err.code === 'MODEL_NOT_FOUND' &&
        err.message.includes('"mistral/large"') &&
        err.message.includes('have: openai, scripted') &&
        JSON.stringify(err.details.available) === '["openai","scripted"]',
    );
  });
});
