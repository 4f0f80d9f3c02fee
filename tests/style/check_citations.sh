#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_citations.sh SRC_ROOT: papers are cited as papers (title, venue, section or figure), never
# by the file names of a reading list ("seed 00x", "digest", "[repo]"), anywhere in lib app
# drivers docs tests usertools README.md; and the reference docs (docs/*.md, README.md; not
# docs/results/, where measurements live with their dates) carry no dates and no commit hashes
# as baselines (a backticked word of 7 to 12 hex digits, one a letter, so that `4194304` is a
# number). Prints each offending line and fails on any.
set -euo pipefail
root=${1:?source root}
cd "$root"
self=tests/style/check_citations.sh
fail=0

paths=()
for p in lib app drivers docs tests usertools README.md; do
    [ -e "$p" ] && paths+=("$p")
done
[ ${#paths[@]} -gt 0 ] || { echo "nothing to check under $root" >&2; exit 1; }

# (1) citations a reader of the repository cannot follow
if out=$(grep -rn -E 'seed 0|digest|\[repo\]' "${paths[@]}" | grep -v "^$self:"); then
    echo "cite the paper (title, venue, section), not a seed, digest or [repo] mark:"
    printf '%s\n' "$out"
    fail=1
fi

# (2) dates and commit-hash baselines in the reference docs
docs=()
for f in docs/*.md README.md; do
    [ -f "$f" ] && docs+=("$f")
done
if [ ${#docs[@]} -gt 0 ] &&
    out=$(grep -n -H -P '20[0-9][0-9]-[01][0-9]-[0-3][0-9]|`(?=[0-9]*[a-f])[0-9a-f]{7,12}`' "${docs[@]}"); then
    echo "reference docs say what the code does: dates and commit baselines go to docs/results/:"
    printf '%s\n' "$out"
    fail=1
fi

[ $fail -eq 0 ] && echo "citations: clean (${#paths[@]} paths, ${#docs[@]} reference pages)"
exit $fail
