#!/bin/sh
# Lints the OpenAPI document as a deployment publishes it (with its public address): Redocly's
# recommended rules and Spectral's OWASP ruleset. Warnings are shown; errors fail. The rules the
# project relaxes are listed, with their reasons, in .spectral.yaml and redocly.yaml.
set -eu
out="${TMPDIR:-/tmp}/berth-openapi-$$.json"
trap 'rm -f "$out"' EXIT
BERTH_BASE_URL=https://api.berth.test npx tsx src/cli/main.ts openapi > "$out"
npx redocly lint --format=stylish "$out"
npx spectral lint --fail-severity=error --ruleset .spectral.yaml "$out"
