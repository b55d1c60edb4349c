#!/usr/bin/env bash
# Citus for the tests, by hand: `scripts/citus.sh build` builds it from the vendored source
# (../shared/vendor/citus-*.tar.gz or $ROLEMEM_CITUS_SOURCE) into the cache, or finds it there;
# `scripts/citus.sh up` also starts a coordinator and two workers on loopback until Ctrl-C.
# The tests need neither: their citus_cluster fixture does the same on first use.
source "$(dirname "$0")/_venv.sh"
exec python -m tests.python.citus_cluster "$@"
