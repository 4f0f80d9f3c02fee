#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# check_format.sh SRC_ROOT: every tracked C file is exactly as clang-format (the tree's
# .clang-format) writes it. Prints each difference and fails on any; fix with
#   git ls-files '*.c' '*.h' | xargs clang-format -i
set -euo pipefail
root=${1:?source root}
cd "$root"
command -v clang-format >/dev/null || { echo "clang-format not found: install the Debian package 'clang-format'" >&2; exit 1; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    mapfile -t files < <(git ls-files '*.c' '*.h')
else
    mapfile -t files < <(find app lib drivers tests examples -name '*.[ch]' 2>/dev/null | sort)
fi
[ ${#files[@]} -gt 0 ] || { echo "no C files found under $root" >&2; exit 1; }
clang-format --dry-run --Werror "${files[@]}"
echo "clang-format: ${#files[@]} files clean"
