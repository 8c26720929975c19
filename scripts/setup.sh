#!/usr/bin/env bash
# Installs what xp's build needs and is missing: a C++ compiler, libtorch
# (Debian's libtorch-dev unless LIBTORCH points at another one) and an
# optimized BLAS (Debian's libtorch uses whatever libblas.so.3 is selected;
# libopenblas0-pthread makes that OpenBLAS). Does nothing when all is there.
#
#   scripts/setup.sh build     what the build needs, no more (make build and
#                              make quickstart: the main job)
#   scripts/setup.sh           what the build and tests need (the Slurm test
#                              also wants Debian's slurmctld, slurmd, slurm-client
#                              and munge; the report page's test wants Debian's
#                              chromium: each installed when apt-get can, else
#                              that test skips, saying so)
#   scripts/setup.sh pytorch   also Debian's python3-torch (the same libtorch),
#                              for the PyTorch comparison benchmark (bench/)
set -euo pipefail

die() { echo "setup: $*" >&2; exit 1; }

command -v go >/dev/null 2>&1 || die "Go is not installed: install Go 1.23 or newer from go.dev/dl and put it on PATH"

need=()
command -v g++ >/dev/null 2>&1 || need+=(g++)
if [ -n "${LIBTORCH:-}" ]; then
  [ -f "$LIBTORCH/lib/libtorch.so" ] || die "LIBTORCH=$LIBTORCH has no lib/libtorch.so (want an unpacked libtorch, or .../site-packages/torch)"
  [ -d "$LIBTORCH/include/torch" ] || die "LIBTORCH=$LIBTORCH has no include/torch"
else
  dpkg-query -W -f='${Status}' libtorch-dev 2>/dev/null | grep -q "install ok installed" || need+=(libtorch-dev)
fi
if command -v dpkg-query >/dev/null 2>&1; then
  dpkg-query -W -f='${Status}' libopenblas0-pthread 2>/dev/null | grep -q "install ok installed" || need+=(libopenblas0-pthread)
fi
if [ "${1:-}" = pytorch ]; then
  { python3 -c 'import torch' || /usr/bin/python3 -c 'import torch'; } >/dev/null 2>&1 || need+=(python3-torch)
fi

# Slurm for TestSlurm (a single-node cluster the test starts itself):
# optional, never removed again (its libraries are shared with libtorch).
slurm=()
if command -v dpkg-query >/dev/null 2>&1 && [ -z "${1:-}" ]; then
  for p in slurmctld slurmd slurm-client munge; do
    dpkg-query -W -f='${Status}' $p 2>/dev/null | grep -q "install ok installed" || slurm+=($p)
  done
fi
# Chromium for TestReportInBrowser (the report page in a real browser):
# optional like Slurm.
browser=()
if command -v dpkg-query >/dev/null 2>&1 && [ -z "${1:-}" ]; then
  command -v chromium >/dev/null 2>&1 || dpkg-query -W -f='${Status}' chromium 2>/dev/null | grep -q "install ok installed" || browser+=(chromium)
fi

[ ${#need[@]} -eq 0 ] && [ ${#slurm[@]} -eq 0 ] && [ ${#browser[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo
if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$sudo" ] && ! command -v sudo >/dev/null 2>&1; }; then
  [ ${#need[@]} -eq 0 ] || die "missing ${need[*]}: install them as root with apt-get, or set LIBTORCH (see docs/build.md)"
  echo "setup: no apt-get or not root: ${slurm[*]} ${browser[*]} not installed; TestSlurm and TestReportInBrowser will skip" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]} (apt-get; a few minutes the first time)" >&2
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
  echo "setup: installed ${need[*]}" >&2
fi
if [ ${#slurm[@]} -gt 0 ]; then
  echo "setup: installing ${slurm[*]} for the Slurm test (apt-get)" >&2
  if { [ ${#need[@]} -gt 0 ] || $sudo apt-get update -qq; } && $sudo apt-get install -y -qq --no-install-recommends "${slurm[@]}" >/dev/null; then
    echo "setup: installed ${slurm[*]}" >&2
  else
    echo "setup: could not install ${slurm[*]}: TestSlurm will skip" >&2
  fi
fi
if [ ${#browser[@]} -gt 0 ]; then
  echo "setup: installing ${browser[*]} for the report page's browser test (apt-get)" >&2
  if { [ ${#need[@]} -gt 0 ] || [ ${#slurm[@]} -gt 0 ] || $sudo apt-get update -qq; } && $sudo apt-get install -y -qq --no-install-recommends "${browser[@]}" >/dev/null; then
    echo "setup: installed ${browser[*]}" >&2
  else
    echo "setup: could not install ${browser[*]}: TestReportInBrowser will skip" >&2
  fi
fi
