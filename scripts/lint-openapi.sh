#!/bin/sh
# Lints the generated OpenAPI document: Redocly's recommended rules and Spectral's OWASP ruleset,
# failing on any error.
set -eu
out="${TMPDIR:-/tmp}/berth-openapi-$$.json"
trap 'rm -f "$out"' EXIT
npx tsx src/cli/main.ts openapi > "$out"
npx redocly lint --format=stylish "$out"
npx spectral lint --fail-severity=error --display-only-failures --ruleset .spectral.yaml "$out"
