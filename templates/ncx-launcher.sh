#!/bin/sh
# ncx launcher, written by `ncx init --agent`; commit it. The agents' files of this repository
# (hooks, MCP servers, the protocol block) start ncx through it, so one committed configuration
# works on every teammate's machine and in CI, wherever each installed ncx. It runs the first
# of: $NCX_BIN (an ncx executable), the ncx that ran `ncx init` in this clone (`git config
# ncx.bin`, never committed), `ncx` on PATH, ~/.ncx/bin/ncx (the README's install),
# `python3 -m ncx`. With none of them it says how to install ncx; a hook (`agent-hook`) then
# exits 0, so the agent carries on without context. `ncx init --agent` keeps a launcher that
# was edited here (it says so; --force replaces it).
NCX_LAUNCHER=.neocortex/bin/ncx  # how ncx names itself in the hints it prints
export NCX_LAUNCHER
# a hook must never fail the agent: where no ncx can start, `agent-hook` exits 0
stop() {
  if [ "$hook" = 1 ]; then exit 0; fi
  exit "$1"
}
hook=0
if [ "${1:-}" = agent-hook ]; then hook=1; fi
if [ -n "${NCX_BIN:-}" ]; then
  if [ -f "$NCX_BIN" ] && [ -x "$NCX_BIN" ]; then
    exec "$NCX_BIN" "$@"
  fi
  echo "ncx: NCX_BIN=$NCX_BIN is not an executable" >&2
  echo "  hint: set NCX_BIN to an ncx executable (e.g. ~/.ncx/bin/ncx), or unset it" >&2
  stop 126
fi
here=$(dirname "$0")
mine=$(git -C "$here/../.." config --local --get ncx.bin 2>/dev/null)
if [ -n "$mine" ] && [ -f "$mine" ] && [ -x "$mine" ] && ! [ "$mine" -ef "$0" ]; then
  exec "$mine" "$@"
fi
found=$(command -v ncx 2>/dev/null)
if [ -n "$found" ] && ! [ "$found" -ef "$0" ]; then
  exec "$found" "$@"
fi
if [ -n "${HOME:-}" ] && [ -x "$HOME/.ncx/bin/ncx" ]; then
  exec "$HOME/.ncx/bin/ncx" "$@"
fi
# `python3 -m ncx` would import the current folder's ncx/ first (this repository's own, if it
# has one): the folder Python puts first on sys.path is dropped before ncx is imported (what
# -P does, which Python 3.10 lacks).
run='import sys
if sys.path and sys.path[0] == "": del sys.path[0]
import runpy; runpy.run_module("ncx", run_name="__main__", alter_sys=True)'
for py in python3 python; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c "$run" --version >/dev/null 2>&1; then
    exec "$py" -c "$run" "$@"
  fi
done
echo "ncx: ncx is not installed on this machine (tried \$NCX_BIN, git config ncx.bin, ncx on PATH, ~/.ncx/bin/ncx, python3 -m ncx)" >&2
echo "  hint: install it: python3 -m venv ~/.ncx && ~/.ncx/bin/pip install 'git+<the ncx repo: URL>@<its rev:>' (both in .pre-commit-config.yaml; README: Set-up), or set NCX_BIN to an ncx executable" >&2
stop 127
