import { generateText, jsonSchema, stepCountIs, tool } from 'ai';
import { MockLanguageModelV2 } from 'ai/test';
import { MODEL_STEPS, TOOL_CALLS, type ConversationCount, type Contender } from './contender.js';

const USAGE = { inputTokens: 10, outputTokens: 5, totalTokens: 15 };

/**
 * The same loop in the Vercel AI SDK v5: `generateText` with the mock model
 * of `ai/test` (a fresh mock per conversation, like hookgate's fresh
 * operation; the mock records every call it gets), one tool with a no-op
 * `execute`, and `stopWhen: stepCountIs(21)`. The mock answers with one tool
 * call for the first 20 model calls, then with text.
 */
export function aiSdkContender(): Contender {
  let toolRuns = 0;
  const noop = tool({
    description: 'Does nothing.',
    inputSchema: jsonSchema<{ i: number }>({ type: 'object', properties: { i: { type: 'number' } }, required: ['i'] }),
    execute: async () => {
      toolRuns++;
      return 'ok';
    },
  });
  return {
    name: 'ai-sdk',
    description: 'ai v5 generateText + MockLanguageModelV2, 1 no-op tool, stopWhen stepCountIs(21)',
    async setup() {},
    async runConversation(index: number): Promise<ConversationCount> {
      let turn = 0;
      const model = new MockLanguageModelV2({
        doGenerate: async () => {
          const i = turn++;
          if (i < TOOL_CALLS) {
            return {
              content: [{ type: 'tool-call', toolCallId: `call_${i}_0`, toolName: 'noop', input: JSON.stringify({ i }) }],
              finishReason: 'tool-calls',
              usage: USAGE,
              warnings: [],
            };
          }
          return { content: [{ type: 'text', text: 'done' }], finishReason: 'stop', usage: USAGE, warnings: [] };
        },
      });
      const before = toolRuns;
      const result = await generateText({
        model,
        tools: { noop },
        prompt: `Conversation ${index}: call the tool ${TOOL_CALLS} times.`,
        stopWhen: stepCountIs(MODEL_STEPS),
      });
      if (result.text !== 'done') throw new Error(`ai-sdk conversation ${index} ended without the final text (${result.finishReason})`);
      return { modelSteps: result.steps.length, toolSteps: toolRuns - before };
    },
    facts: () => ({}),
    async teardown() {},
  };
}
