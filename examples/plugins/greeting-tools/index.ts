import { definePlugin } from '../../../kernel/plugin.js';
import { ToolSources } from '../../../kernel/tokens.js';

/** One tool, `greet/hello`, that says hello to whoever the model names. */
export default definePlugin({
  id: 'greeting-tools',
  provides: [ToolSources],
  register(ctx) {
    ctx.bindValue(ToolSources, {
      id: 'greeting',
      list: () => [{
        identifier: 'greet', apiName: 'hello', toolSource: 'greeting', description: 'Greets someone by name',
        parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      }],
      execute: async ({ args }) => `Hello, ${String(args.name)}!`,
    });
  },
});
