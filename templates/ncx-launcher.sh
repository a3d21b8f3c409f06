#!/bin/sh
# ncx launcher, written by `ncx init --agent`; commit it. The agents' files of this repository
# (hooks, MCP servers, the protocol block) start ncx through it, so one committed configuration
# works on every teammate's machine and in CI, wherever each installed ncx. It runs the first
# of: $NCX_BIN (an ncx executable), `ncx` on PATH, ~/.ncx/bin/ncx (the README's install),
# `python3 -m ncx`. With none of them it says how to install ncx; a hook (`agent-hook`) then
# exits 0, so the agent carries on without context.
NCX_LAUNCHER=.neocortex/bin/ncx  # how ncx names itself in the hints it prints
export NCX_LAUNCHER
if [ -n "${NCX_BIN:-}" ]; then
  exec "$NCX_BIN" "$@"
fi
found=$(command -v ncx 2>/dev/null)
if [ -n "$found" ] && ! [ "$found" -ef "$0" ]; then
  exec "$found" "$@"
fi
if [ -n "${HOME:-}" ] && [ -x "$HOME/.ncx/bin/ncx" ]; then
  exec "$HOME/.ncx/bin/ncx" "$@"
fi
for py in python3 python; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -m ncx --version >/dev/null 2>&1; then
    exec "$py" -m ncx "$@"
  fi
done
echo "ncx: ncx is not installed on this machine (tried \$NCX_BIN, ncx on PATH, ~/.ncx/bin/ncx, python3 -m ncx)" >&2
echo "  hint: install it: python3 -m venv ~/.ncx && ~/.ncx/bin/pip install 'git+<the ncx repo: URL>@<its rev:>' (both in .pre-commit-config.yaml; README: Set-up), or set NCX_BIN to an ncx executable" >&2
if [ "${1:-}" = agent-hook ]; then
  exit 0
fi
exit 127
