#!/usr/bin/env bash
# Whole-process fingerprinting A/B: two `copyhound` binaries alternated on one
# core over the same files, CPU (user+sys) per run, mean and best of each and
# their ratio. Used for docs/performance.md ("Fingerprinting news text").
#
#   deploy/bench/fingerprint_ab.sh BASELINE CANDIDATE ROUNDS REPEAT FILE...
#
# REPEAT passes the file list that many times in one process (5 x the news
# corpus of news_corpus.py is 27.5 MB, the size the issue measured).
set -euo pipefail
base=$1 cand=$2 rounds=$3 repeat=$4
shift 4
files=()
for _ in $(seq "$repeat"); do files+=("$@"); done
bytes=$(cat "$@" | wc -c)
bytes=$((bytes * repeat))
times=$(mktemp)
trap 'rm -f "$times"' EXIT
for _ in $(seq "$rounds"); do
  for bin in "$base" "$cand"; do
    /usr/bin/time -f "$bin %U %S" -a -o "$times" taskset -c 0 "$bin" fingerprint "${files[@]}" >/dev/null
  done
done
awk -v base="$base" -v cand="$cand" -v bytes="$bytes" '
  { t = $2 + $3; s[$1] += t; n[$1]++; if (!($1 in m) || t < m[$1]) m[$1] = t }
  END {
    for (k in s) printf "%s: mean %.3f s, best %.3f s, %.1f MB per CPU-second\n", k, s[k] / n[k], m[k], bytes / 1e6 / (s[k] / n[k])
    printf "ratio (baseline / candidate): mean %.2f, best %.2f\n", (s[base] / n[base]) / (s[cand] / n[cand]), m[base] / m[cand]
  }' "$times"
