import { definePlugin, ToolSources, v } from 'hookgate';

/**
 * One tool, `greet/hello`, that says hello to whoever the model names. Its
 * settings come from the config: `plugins: { settings: { greeting-tools: { greeting: Hi } } }`.
 */
export default definePlugin({
  id: 'greeting-tools',
  provides: [ToolSources],
  settings: v.strictObject({ greeting: v.optional(v.pipe(v.string(), v.nonEmpty('expected a non-empty greeting')), 'Hello') }),
  register(ctx) {
    const { greeting } = ctx.settings; // typed: { greeting: string }
    ctx.bindValue(ToolSources, {
      id: 'greeting',
      list: () => [{
        identifier: 'greet', apiName: 'hello', toolSource: 'greeting', description: 'Greets someone by name',
        parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      }],
      execute: async ({ args }) => `${greeting}, ${String(args.name)}!`,
    });
  },
});
