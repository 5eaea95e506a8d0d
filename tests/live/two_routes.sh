#!/usr/bin/env bash
# Two routes on one candidate, in two `recourse run` processes, inside the
# sandbox: the first is started, and once it waits for its account's reset
# the second is started; both are followed until they rest.
#   two_routes.sh RECOURSE DB PROFILE
# Prints each run's output to WORKDIR-relative files run1.out / run2.out and
# exits with the larger exit code of the two.
set -uo pipefail
recourse=$1 db=$2 profile=$3
prompt="Reply with the single word done."

"$recourse" run --profile "$profile" --prompt "$prompt" --db "$db" >run1.out 2>&1 &
first=$!
for _ in $(seq 600); do
  "$recourse" routes --state waiting_reset --db "$db" 2>/dev/null | grep -q '^route 1 ' && break
  kill -0 "$first" 2>/dev/null || break
  sleep 0.1
done
"$recourse" run --profile "$profile" --prompt "$prompt" --db "$db" >run2.out 2>&1 &
second=$!
wait "$first"; rc1=$?
wait "$second"; rc2=$?
exit $((rc1 > rc2 ? rc1 : rc2))
