#!/usr/bin/env bash
# A route the safety gate hands to a person after a tool ran, then one manual
# action on it, inside the sandbox:
#   continue.sh RECOURSE DB PROFILE ACTION
# `recourse run` comes to rest, then `recourse action 1 ACTION --yes` at the
# generation it rested at follows the route until it rests again (--yes: the
# test is the person who saw what ran). ACTION `none` stops after the run (a
# route that recovers by itself). Each step's output goes to run.out and
# action.out in the working directory; exits with the last step's exit code.
set -uo pipefail
recourse=$1 db=$2 profile=$3 action=$4

"$recourse" run --profile "$profile" --prompt "Print the marker, then finish." --db "$db" \
  >run.out 2>&1
ran=$?
[ "$action" = none ] && exit "$ran"
generation=$("$recourse" route 1 --json --db "$db" |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["snapshot"]["generation"])')
exec "$recourse" action 1 "$action" --generation "$generation" --yes --db "$db" >action.out 2>&1
