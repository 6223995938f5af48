#!/usr/bin/env bash
# Regenerate the committed datasets and every md5 of datasets/MANIFEST with the current
# generator and serial reference. Run after a deliberate change to either; review the diff.
set -euo pipefail
cd "$(dirname "$0")/.."
make -s tools
gen=build/bin/labkit-gen
for name in $(awk '!/^#/ && NF == 6 && $5 == "yes" {print $1}' datasets/MANIFEST); do
    model=$(awk -v n="$name" '$1 == n {print $2}' datasets/MANIFEST)
    "$gen" dataset "$name" "datasets/$model" >/dev/null
done
tmp=$(mktemp)
while IFS= read -r line; do
    read -r name model spec steps stored md5 rest <<<"$line" || true
    if [[ $line =~ ^[[:space:]]*# ]] || [ -z "${md5:-}" ] || [ -n "${rest:-}" ]; then
        printf '%s\n' "$line"
    else
        printf '%s\n' "${line/$md5/$("$gen" expect "$name")}"
    fi
done < datasets/MANIFEST > "$tmp"
mv "$tmp" datasets/MANIFEST
git --no-pager diff --stat -- datasets
