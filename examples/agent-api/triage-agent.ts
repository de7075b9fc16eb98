import { useInitialData, useModel, usePersistentState, useTool, v, type AgentProps } from 'hookgate';

/** The model's turns for the demo (the scripted provider plays them in order across the conversation). */
const DEMO_TURNS = [
  { toolCalls: [{ identifier: 'agent', apiName: 'label', args: { label: 'bug' } }] },
  { text: 'Labelled it a bug: the login fails after the update.' },
  { toolCalls: [{ identifier: 'agent', apiName: 'label', args: { label: 'staging' } }] },
  { text: 'Also seen on staging; labels are now bug, staging.' },
];

/**
 * An issue-triage agent written as a document 001 agent function: re-rendered
 * before every model call, its labels kept in persistent state (written with
 * the tool step that changed them), the issue title read from the instance's
 * initial data. Swap the scripted model for `useModel('openai/gpt-4o-mini')`
 * to run it against a real provider.
 */
export function Triage({ id }: AgentProps): string {
  useModel({ provider: 'scripted', turns: DEMO_TURNS, onEnd: 'repeat-last' });
  const { title } = useInitialData<{ title: string }>() ?? { title: '(untitled)' };
  const [labels, setLabels] = usePersistentState<string[]>('labels', []);
  useTool({
    name: 'label',
    description: 'Adds a label to the issue',
    input: v.object({ label: v.string() }),
    run: ({ data }: { data: { label: string } }) => setLabels((all) => (all.includes(data.label) ? all : [...all, data.label])),
  });
  return `You triage issue ${id}, "${title}". Labels so far: ${labels.join(', ') || 'none'}. Label it, then say what you did.`;
}
Triage.initialData = v.object({ title: v.string() });
