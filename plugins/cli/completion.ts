import type { Command, Option } from 'commander';

/** The shells `hookgate completion <shell>` writes a script for. */
export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

/** One command of the tree, as completion needs it. */
interface CommandEntry {
  /** Names from the top, e.g. `['policy', 'check']`; `[]` is `hookgate` itself. */
  path: string[];
  description: string;
  subcommands: string[];
  /** Choices of the first positional argument, when it has them (`completion <shell>`). */
  argumentChoices: string[];
  options: Array<{ flags: string[]; long?: string; short?: string; description: string; takesValue: boolean; choices: string[] }>;
}

/**
 * A completion script for `shell`, generated from the commander program
 * itself, so every command, subcommand, option and enumerated value it
 * offers is one the CLI accepts. Install:
 * `source <(hookgate completion bash)` (or in ~/.bashrc),
 * `hookgate completion zsh > "${fpath[1]}/_hookgate"`,
 * `hookgate completion fish > ~/.config/fish/completions/hookgate.fish`.
 */
export function completionScript(program: Command, shell: CompletionShell): string {
  const entries = commandEntries(program, []);
  switch (shell) {
    case 'bash':
      return bashScript(entries);
    case 'zsh':
      return zshScript(entries);
    case 'fish':
      return fishScript(entries);
  }
}

function commandEntries(command: Command, path: string[]): CommandEntry[] {
  const visible = command.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  const options = command.options.map((o: Option) => ({
    flags: [o.short, o.long].filter((f): f is string => typeof f === 'string'),
    long: o.long,
    short: o.short,
    description: o.description,
    takesValue: o.required || o.optional,
    choices: o.argChoices ?? [],
  }));
  options.push({ flags: ['-h', '--help'], long: '--help', short: '-h', description: 'show help', takesValue: false, choices: [] });
  const entry: CommandEntry = {
    path,
    description: command.description(),
    subcommands: visible.map((c) => c.name()),
    argumentChoices: command.registeredArguments[0]?.argChoices ?? [],
    options,
  };
  return [entry, ...visible.flatMap((c) => commandEntries(c, [...path, c.name()]))];
}

/** Functions both bash and zsh read: POSIX `case` over the command path. */
function sharedFunctions(entries: CommandEntry[]): string {
  const global = entries[0]!;
  const globalFlags = global.options.flatMap((o) => o.flags);
  const key = (e: CommandEntry) => shellWord(e.path.join(' '));
  const isCommand = entries.filter((e) => e.path.length > 0).map(key).join('|');
  const words = (e: CommandEntry) => (e.subcommands.length > 0 ? e.subcommands : e.argumentChoices).join(' ');
  const optionWords = (e: CommandEntry) => [...new Set([...e.options.flatMap((o) => o.flags), ...(e.path.length > 0 ? globalFlags : [])])].join(' ');
  const valueCases = entries.flatMap((e) =>
    e.options.filter((o) => o.choices.length > 0).map((o) => `    ${shellWord(`${e.path.join(' ')}|${o.long}`)}) echo ${shellWord(o.choices.join(' '))} ;;`),
  );
  const globalValueCases = global.options.filter((o) => o.choices.length > 0).map((o) => `    *'|${o.long}') echo ${shellWord(o.choices.join(' '))} ;;`);
  return `# Generated from hookgate's own command definitions (hookgate completion).
_hookgate_is_command() {
  case "$1" in
    ${isCommand}) return 0 ;;
  esac
  return 1
}

_hookgate_commands() {
  case "$1" in
${entries.map((e) => `    ${key(e)}) echo ${shellWord(words(e))} ;;`).join('\n')}
  esac
}

_hookgate_options() {
  case "$1" in
${entries.map((e) => `    ${key(e)}) echo ${shellWord(optionWords(e))} ;;`).join('\n')}
  esac
}

_hookgate_values() {
  case "$1|$2" in
${[...valueCases, ...globalValueCases].join('\n')}
  esac
}
`;
}

function bashScript(entries: CommandEntry[]): string {
  return `# bash completion for hookgate: source <(hookgate completion bash)
${sharedFunctions(entries)}
_hookgate() {
  local cur prev cmdpath word i values
  cur="\${COMP_WORDS[COMP_CWORD]}"
  prev=""
  if (( COMP_CWORD > 0 )); then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  cmdpath=""
  for (( i = 1; i < COMP_CWORD; i++ )); do
    word="\${COMP_WORDS[i]}"
    if _hookgate_is_command "\${cmdpath:+$cmdpath }$word"; then cmdpath="\${cmdpath:+$cmdpath }$word"; fi
  done
  values="$(_hookgate_values "$cmdpath" "$prev")"
  if [[ -n "$values" ]]; then
    COMPREPLY=( $(compgen -W "$values" -- "$cur") )
  elif [[ "$cur" == -* ]]; then
    COMPREPLY=( $(compgen -W "$(_hookgate_options "$cmdpath")" -- "$cur") )
  else
    values="$(_hookgate_commands "$cmdpath")"
    if [[ -n "$values" ]]; then COMPREPLY=( $(compgen -W "$values" -- "$cur") ); else COMPREPLY=( $(compgen -f -- "$cur") ); fi
  fi
}
complete -o default -F _hookgate hookgate
`;
}

function zshScript(entries: CommandEntry[]): string {
  return `#compdef hookgate
# zsh completion for hookgate: hookgate completion zsh > "\${fpath[1]}/_hookgate" (or source it after compinit)
${sharedFunctions(entries)}
_hookgate() {
  local cur="\${words[CURRENT]}" prev="\${words[CURRENT-1]}" cmdpath="" word i values
  for (( i = 2; i < CURRENT; i++ )); do
    word="\${words[i]}"
    if _hookgate_is_command "\${cmdpath:+$cmdpath }$word"; then cmdpath="\${cmdpath:+$cmdpath }$word"; fi
  done
  values="$(_hookgate_values "$cmdpath" "$prev")"
  if [[ -n "$values" ]]; then
    compadd -- \${=values}
  elif [[ "$cur" == -* ]]; then
    values="$(_hookgate_options "$cmdpath")"
    compadd -- \${=values}
  else
    values="$(_hookgate_commands "$cmdpath")"
    if [[ -n "$values" ]]; then compadd -- \${=values}; else _files; fi
  fi
}
compdef _hookgate hookgate
`;
}

function fishScript(entries: CommandEntry[]): string {
  const lines = ['# fish completion for hookgate: hookgate completion fish > ~/.config/fish/completions/hookgate.fish', 'complete -c hookgate -f'];
  for (const e of entries) {
    const condition = fishCondition(e.path, entries);
    const offers = e.subcommands.length > 0 ? entries.filter((c) => c.path.length === e.path.length + 1 && c.path.slice(0, -1).join(' ') === e.path.join(' ')) : [];
    for (const sub of offers) lines.push(`complete -c hookgate -n ${fishWord(condition)} -a ${fishWord(sub.path.at(-1)!)} -d ${fishWord(sub.description)}`);
    if (e.subcommands.length === 0 && e.argumentChoices.length > 0) lines.push(`complete -c hookgate -n ${fishWord(condition)} -a ${fishWord(e.argumentChoices.join(' '))}`);
    if (e.subcommands.length === 0 && e.argumentChoices.length === 0 && e.path.length > 0) lines.push(`complete -c hookgate -n ${fishWord(condition)} -F`);
    for (const o of e.options) {
      const names = [o.long ? `-l ${o.long.slice(2)}` : '', o.short ? `-s ${o.short.slice(1)}` : ''].filter(Boolean).join(' ');
      const value = o.choices.length > 0 ? ` -x -a ${fishWord(o.choices.join(' '))}` : o.takesValue ? ' -r' : '';
      const where = e.path.length === 0 ? '' : ` -n ${fishWord(condition)}`;
      lines.push(`complete -c hookgate${where} ${names}${value} -d ${fishWord(o.description)}`);
    }
  }
  return lines.join('\n') + '\n';
}

/** True in fish when the words so far name exactly `path` (and no deeper subcommand of it). */
function fishCondition(path: string[], entries: CommandEntry[]): string {
  if (path.length === 0) return '__fish_use_subcommand';
  const seen = path.map((p) => `__fish_seen_subcommand_from ${p}`);
  const deeper = entries.filter((e) => e.path.length === path.length + 1 && e.path.slice(0, -1).join(' ') === path.join(' ')).map((e) => e.path.at(-1)!);
  const siblings = path.length === 1 ? entries.filter((e) => e.path.length === 1 && e.path[0] !== path[0]).map((e) => e.path[0]!) : [];
  const parts = [...seen];
  if (deeper.length > 0) parts.push(`not __fish_seen_subcommand_from ${deeper.join(' ')}`);
  if (siblings.length > 0 && path.length === 1) parts.push(`not __fish_seen_subcommand_from ${siblings.join(' ')}`);
  return parts.join('; and ');
}

/** A word quoted for bash/zsh (single quotes). */
function shellWord(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** A word quoted for fish (single quotes, backslash escapes). */
function fishWord(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}
