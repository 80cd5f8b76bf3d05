#!/bin/sh
# Runs a command inside a loopback-only network namespace: the tests can reach 127.0.0.1 and
# nothing else, so no bug (a model download, an outbound URL) can leave the machine.
# AGENT_PLATFORM_TEST_NETNS=1 tells the tests they are inside it: the outbound-policy tests then
# put refused addresses (10.0.0.1, 169.254.169.254) on its loopback interface and listen there,
# to count connections that must never happen (packages/core/test/traps.ts).
# Needs util-linux `unshare` and iproute2 `ip`; without them it runs the command as is, with a
# warning (CI installs both, see .ci/run).
if command -v unshare >/dev/null 2>&1 && command -v ip >/dev/null 2>&1 && unshare -rn true 2>/dev/null; then
  exec unshare -rn sh -c 'ip link set lo up && AGENT_PLATFORM_TEST_NETNS=1 exec "$@"' sh "$@"
fi
echo "warning: unshare/ip not available; running without network isolation" >&2
exec "$@"
