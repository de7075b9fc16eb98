import { createRequire } from 'node:module';
import { modelSteps, type ConversationCount, type Contender } from './contender.js';
import { importPeer } from './peer-packages.js';

/** The AI SDK majors the bench runs: 5 from the project's devDependencies, 6 and 7 from bench/peers. */
export type AiSdkMajor = 5 | 6 | 7;

/** The language-model specification each major calls (its `ai/test` mock: MockLanguageModelV2, V3, V4). */
const SPEC_OF: Record<AiSdkMajor, 'v2' | 'v3' | 'v4'> = { 5: 'v2', 6: 'v3', 7: 'v4' };

/** The part of the `ai` package the loop uses; the same call on every major. */
interface AiSdk {
  generateText(options: Record<string, unknown>): Promise<{ text: string; steps: unknown[]; finishReason: unknown }>;
  jsonSchema(schema: Record<string, unknown>): unknown;
  stepCountIs(n: number): unknown;
  tool(definition: Record<string, unknown>): unknown;
}

/**
 * The same loop in the Vercel AI SDK (major 5, 6 or 7): `generateText` with a
 * fresh scripted model per conversation (like hookgate's fresh operation),
 * one tool with a no-op `execute` (JSON-schema input, no validator) and
 * `stopWhen: stepCountIs(calls + 1)`. The model answers with one tool call
 * for the first `calls` model calls, then with the text `done`.
 *
 * The model is {@link scriptedLanguageModel}, not the mock of `ai/test`: the
 * mocks keep every call's options (`doGenerateCalls`, each with the whole
 * prompt), which hookgate's scripted model does not, and which grows with the
 * square of the conversation length.
 */
export function aiSdkContender(major: AiSdkMajor, calls: number): Contender {
  let sdk: AiSdk | undefined;
  let noop: unknown;
  let version = '?';
  let toolRuns = 0;
  const name = major === 5 ? 'ai-sdk' : `ai-sdk-${major}`;
  return {
    name,
    get description() {
      return `ai ${version} generateText + a scripted LanguageModel${SPEC_OF[major].toUpperCase()} (no call log), 1 no-op tool, stopWhen stepCountIs(${modelSteps(calls)})`;
    },
    calls,
    async setup() {
      if (major === 5) {
        sdk = (await import('ai')) as unknown as AiSdk;
        version = (createRequire(import.meta.url)('ai/package.json') as { version: string }).version;
      } else {
        const peer = await importPeer<AiSdk>(`ai-v${major}`);
        sdk = peer.module;
        version = peer.version;
      }
      if (Number(version.split('.')[0]) !== major) throw new Error(`${name}: expected ai ${major}.x, found ${version}`);
      noop = sdk.tool({
        description: 'Does nothing.',
        inputSchema: sdk.jsonSchema({ type: 'object', properties: { i: { type: 'number' } }, required: ['i'] }),
        execute: async () => {
          toolRuns++;
          return 'ok';
        },
      });
    },
    async runConversation(index: number): Promise<ConversationCount> {
      const before = toolRuns;
      const result = await sdk!.generateText({
        model: scriptedLanguageModel(SPEC_OF[major], calls),
        tools: { noop },
        prompt: `Conversation ${index}: call the tool ${calls} times.`,
        stopWhen: sdk!.stepCountIs(modelSteps(calls)),
      });
      if (result.text !== 'done') throw new Error(`${name} conversation ${index} ended without the final text (${JSON.stringify(result.finishReason)})`);
      return { modelSteps: result.steps.length, toolSteps: toolRuns - before };
    },
    facts: () => ({ version }),
    async teardown() {},
  };
}

/**
 * A minimal language model of specification `spec` (the object a provider
 * package returns): `doGenerate` answers turn i < `calls` with one call of
 * the `noop` tool and then `done`, with fixed usage, and keeps nothing but
 * its turn counter. v2 (ai 5) has a string finish reason and flat usage;
 * v3 (ai 6) and v4 (ai 7) a unified/raw finish reason and per-kind token counts.
 */
export function scriptedLanguageModel(spec: 'v2' | 'v3' | 'v4', calls: number): Record<string, unknown> {
  let turn = 0;
  const v2 = spec === 'v2';
  const finish = (reason: 'tool-calls' | 'stop') => (v2 ? reason : { unified: reason, raw: undefined });
  const usage = () =>
    v2
      ? { inputTokens: 10, outputTokens: 5, totalTokens: 15 }
      : {
          inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        };
  return {
    specificationVersion: spec,
    provider: 'bench',
    modelId: 'scripted',
    supportedUrls: {},
    doGenerate: async () => {
      const i = turn++;
      if (i < calls) {
        return {
          content: [{ type: 'tool-call', toolCallId: `call_${i}_0`, toolName: 'noop', input: JSON.stringify({ i }) }],
          finishReason: finish('tool-calls'),
          usage: usage(),
          warnings: [],
        };
      }
      return { content: [{ type: 'text', text: 'done' }], finishReason: finish('stop'), usage: usage(), warnings: [] };
    },
    doStream: async () => {
      throw new Error('the step-loop bench only calls doGenerate');
    },
  };
}
