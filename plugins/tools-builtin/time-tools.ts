import type { BuiltinTool } from './builtin-tool.js';
import { BUILTIN_TOOL_SOURCE } from './builtin-tool.js';
import { ToolArgs } from './tool-args.js';

/** `time/now`: the current time as an ISO 8601 UTC string. `now` is injectable for tests. */
export function createTimeTools(now: () => Date = () => new Date()): BuiltinTool[] {
  return [
    {
      definition: {
        identifier: 'time',
        apiName: 'now',
        toolSource: BUILTIN_TOOL_SOURCE,
        description: 'Returns the current date and time as an ISO 8601 string in UTC (for example 2025-01-31T09:30:00.000Z).',
        parameters: { type: 'object', properties: {}, additionalProperties: false },
      },
      async run(args) {
        new ToolArgs('time/now', args, []);
        const at = now();
        return { content: at.toISOString(), data: { iso: at.toISOString(), epochMs: at.getTime() } };
      },
    },
  ];
}
