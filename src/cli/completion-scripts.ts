// The scripts `gds completion <shell>` prints. Each one only hands the words of the line to
// `gds __complete line -- <words…>` (the last word is the one being completed) and shows what it prints:
// `value<TAB>description` lines, or `:files` for the shell's own file-name completion. Everything else (the
// commands, flags, enum values, and what the service knows) is decided by gds itself (completion.ts).

export const COMPLETION_SHELLS = ['bash', 'zsh', 'fish', 'powershell'] as const;
export type CompletionShell = (typeof COMPLETION_SHELLS)[number];

export const COMPLETION_SETUP: Readonly<Record<CompletionShell, string>> = {
  bash: 'eval "$(gds completion bash)"   # in ~/.bashrc',
  zsh: 'eval "$(gds completion zsh)"    # in ~/.zshrc, after compinit',
  fish: 'gds completion fish | source   # in ~/.config/fish/config.fish',
  powershell: 'gds completion powershell | Out-String | Invoke-Expression   # in $PROFILE',
};

const bash = `# gds completion for bash. Set up: eval "$(gds completion bash)" in ~/.bashrc
_gds_complete() {
  local line="\${COMP_LINE:0:COMP_POINT}" out value current
  local -a words
  # without -r: a name completed before is on the line quoted, backslashes and all; read back, it is the name
  read -a words <<< "$line"
  if [[ -z "$line" || "$line" =~ [[:space:]]$ ]]; then words+=(""); fi
  current="\${words[\${#words[@]}-1]}"
  COMPREPLY=()
  out=$(gds __complete line -- "\${words[@]:1}" 2>/dev/null) || return 0
  if [[ "$out" == ":files" ]]; then
    compopt -o filenames 2>/dev/null
    mapfile -t COMPREPLY < <(compgen -f -- "$current")
    return 0
  fi
  [[ -z "$out" ]] && return 0
  while IFS= read -r value; do
    value="\${value%%$'\\t'*}"
    # bash replaces only what follows '=' in --flag=value
    if [[ "$current" == -*=* && "$COMP_WORDBREAKS" == *=* ]]; then value="\${value#*=}"; fi
    # bash puts a candidate on the line as it is: quoted, a name from the service ('a b', '$(…)') is one word
    printf -v value '%q' "$value"
    COMPREPLY+=("$value")
  done <<< "$out"
}
complete -o nosort -F _gds_complete gds 2>/dev/null || complete -F _gds_complete gds
`;

const zsh = `#compdef gds
# gds completion for zsh. Set up: eval "$(gds completion zsh)" in ~/.zshrc, after compinit
_gds() {
  local out line value description
  local -a candidates
  # the words as typed, unquoted (h\\ m is h m): what is on the line is quoted
  out=$(gds __complete line -- "\${(@Q)words[2,CURRENT]}" 2>/dev/null) || return 1
  if [[ "$out" == ":files" ]]; then
    _files
    return
  fi
  for line in "\${(@f)out}"; do
    [[ -z "$line" ]] && continue
    value="\${line%%$'\\t'*}"
    description=""
    [[ "$line" == *$'\\t'* ]] && description="\${line#*$'\\t'}"
    candidates+=("\${value//:/\\\\:}\${description:+:$description}")
  done
  (( \${#candidates} )) && _describe -t values gds candidates
}
if [[ "\${funcstack[1]}" == "_gds" ]]; then
  _gds "$@"
else
  compdef _gds gds
fi
`;

const fish = `# gds completion for fish. Set up: gds completion fish | source (in ~/.config/fish/config.fish)
function __gds_complete
    set -l words (commandline -opc)
    set -e words[1]
    set -l current (commandline -ct)
    set -l out (gds __complete line -- $words "$current" 2>/dev/null)
    if test "$out" = ":files"
        __fish_complete_path "$current"
        return
    end
    printf '%s\\n' $out
end
complete -c gds -f -a '(__gds_complete)'
`;

const powershell = `# gds completion for PowerShell. Set up: gds completion powershell | Out-String | Invoke-Expression (in $PROFILE)
Register-ArgumentCompleter -Native -CommandName gds -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)
    $words = @($commandAst.CommandElements | Select-Object -Skip 1 | ForEach-Object { $_.ToString() })
    if ($wordToComplete -ne '') { $words = @($words | Select-Object -SkipLast 1) }
    # '--' (quoted: PowerShell passes it on as it is): the words after it are no flags of gds __complete's own
    # (a --help on the line would otherwise print help, each of its lines a candidate)
    $out = @(& gds __complete powershell "--current=$wordToComplete" '--' @words 2>$null)
    if ($out.Count -eq 1 -and $out[0] -eq ':files') { return }
    foreach ($line in $out) {
        # the word to insert (the name, single-quoted where PowerShell would read it otherwise), the name, the description
        $parts = $line -split "\`t", 3
        if ($parts.Count -lt 3 -or $parts[0] -eq '') { continue }
        $tip = if ($parts[2] -ne '') { $parts[2] } else { $parts[1] }
        [System.Management.Automation.CompletionResult]::new($parts[0], $parts[1], 'ParameterValue', $tip)
    }
}
`;

export const COMPLETION_SCRIPTS: Readonly<Record<CompletionShell, string>> = { bash, zsh, fish, powershell };
