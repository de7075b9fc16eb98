import { toJsonSchema as valibotToJsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';

/** The name of the framework-injected tool a result-bound prompt must call (the model sees `harness__finish`). */
export const FINISH_TOOL_NAME = 'finish';
/** The injected way out: the model says it cannot produce a conforming result. */
export const GIVE_UP_TOOL_NAME = 'give_up';

/** How often a result-bound prompt reminds a model that answered without `finish` (33 attempts in all, as the reference). */
export const MAX_RESULT_FOLLOW_UPS = 32;

const OBJECT_TYPES = new Set(['object', 'strict_object', 'loose_object', 'object_with_rest']);

/** Where a result-bound prompt stands: nothing yet, a value accepted by a finish call, or given up. */
export type ResultOutcome =
  | { readonly type: 'pending' }
  | { readonly type: 'finished'; readonly value: unknown; readonly toolCallId: string }
  | { readonly type: 'gave_up'; readonly reason: string; readonly toolCallId: string };

/** What a tool call of `finish` / `give_up` answers (a throw is a tool error the model sees and may retry). */
export interface ResultToolAnswer {
  readonly content: string;
  readonly endsOperation: true;
}

/** The `finish` / `give_up` pair of one prompt, with the outcome they reached. */
export interface ResultTools {
  readonly finishParameters: Readonly<Record<string, unknown>>;
  readonly giveUpParameters: Readonly<Record<string, unknown>>;
  outcome(): ResultOutcome;
  call(apiName: string, args: Readonly<Record<string, unknown>>, toolCallId: string): ResultToolAnswer;
}

/**
 * The injected tools of a prompt with a `result` schema. `finish`'s
 * parameters are the schema as JSON Schema (a schema that is not a top-level
 * object is wrapped as `{ result }`, since models send objects); its
 * arguments are parsed with valibot itself (refinements and transforms
 * included), and a mismatch throws with every issue and its path, so the
 * model sees what was wrong and calls again. The first successful `finish`
 * or `give_up` wins; both end the operation (`endsOperation`), later calls
 * are told it is over.
 */
export function createResultTools(schema: v.GenericSchema): ResultTools {
  const wrapped = !OBJECT_TYPES.has((schema as { type?: string }).type ?? '');
  const { $schema: _dialect, ...inner } = valibotToJsonSchema(schema, { target: 'draft-07', typeMode: 'output', errorMode: 'ignore' }) as Record<string, unknown>;
  const finishParameters = wrapped ? { type: 'object', properties: { result: inner }, required: ['result'], additionalProperties: false } : inner;
  const giveUpParameters = {
    type: 'object',
    properties: { reason: { type: 'string', minLength: 1, description: 'Why the task cannot be completed.' } },
    required: ['reason'],
    additionalProperties: false,
  };
  let outcome: ResultOutcome = { type: 'pending' };
  const done = (): ResultToolAnswer => ({
    content: `${outcome.type === 'finished' ? 'A result was already submitted; the task is complete.' : 'The task was already given up.'} Do not call this tool again.`,
    endsOperation: true,
  });
  return {
    finishParameters,
    giveUpParameters,
    outcome: () => outcome,
    call(apiName, args, toolCallId) {
      if (outcome.type !== 'pending') return done();
      if (apiName === GIVE_UP_TOOL_NAME) {
        const reason = args.reason;
        if (typeof reason !== 'string' || reason.trim() === '') throw new Error(`\`${GIVE_UP_TOOL_NAME}\` needs a non-empty \`reason\` string.`);
        outcome = { type: 'gave_up', reason, toolCallId };
        return { content: 'Acknowledged.', endsOperation: true };
      }
      const parsed = v.safeParse(schema, wrapped ? args.result : args);
      if (!parsed.success) {
        const issues = parsed.issues.map((issue) => `${issue.message}${v.getDotPath(issue) !== null ? ` (at ${v.getDotPath(issue)})` : ''}`).join('; ');
        throw new Error(`The result does not match the required schema: ${issues}. Call \`${FINISH_TOOL_NAME}\` again with corrected arguments.`);
      }
      outcome = { type: 'finished', value: parsed.output, toolCallId };
      return { content: 'Result accepted. The task is complete.', endsOperation: true };
    },
  };
}

/** What a result-bound prompt adds to the text the model gets. */
export function resultFooter(): string {
  return [
    '',
    `When the task is complete, call the \`${FINISH_TOOL_NAME}\` tool with your final answer as its arguments. The arguments are validated against the required schema; if validation fails you will receive an error and may try again.`,
    `If you cannot complete the task or cannot produce a result that conforms to the schema, call the \`${GIVE_UP_TOOL_NAME}\` tool with a clear \`reason\`.`,
    `Do not answer in plain text: only a successful \`${FINISH_TOOL_NAME}\` (or \`${GIVE_UP_TOOL_NAME}\`) call counts.`,
  ].join('\n');
}

/** The reminder sent when the model ended a turn without either tool. */
export function resultFollowUp(): string {
  return `You ended your turn without calling \`${FINISH_TOOL_NAME}\` or \`${GIVE_UP_TOOL_NAME}\`. Call \`${FINISH_TOOL_NAME}\` with your final answer, or \`${GIVE_UP_TOOL_NAME}\` with a reason if you cannot determine it.`;
}
