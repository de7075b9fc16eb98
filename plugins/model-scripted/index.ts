import { definePlugin } from '../../kernel/plugin.js';
import { ModelProviders } from '../../kernel/tokens.js';
import { ScriptedModel } from './scripted-model.js';

export { ScriptedModel, type ModelScript, type ScriptedTurn } from './scripted-model.js';

/** The deterministic model for demos, tests and benchmarks: agents name it `provider: scripted`. */
export default definePlugin({
  id: 'model-scripted',
  description: 'deterministic scripted model (plays the turns listed in the agent file)',
  provides: [ModelProviders],
  drivers: [{ kind: 'model-provider', name: 'scripted' }],
  register: (ctx) => ctx.bindValue(ModelProviders, new ScriptedModel()),
});
