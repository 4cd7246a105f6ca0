#!/usr/bin/env bash
# Installs what mpiflow needs on Debian 12 (run as root): Open MPI and MPICH
# with their compilers, PAPI, Graphviz, OTF2, PajeNG, and Chromium and pandas
# (the Caliper export read as Hatchet reads it) for tests.
# Go must be on the machine already (/usr/local/go or on PATH).
set -euo pipefail
pkgs=(
	build-essential pkg-config gfortran
	libopenmpi-dev openmpi-bin
	libmpich-dev mpich
	graphviz
	libpapi7.0 papi-tools
	libotf2-trace-dev otf2-tools pajeng
	chromium
	jq
	python3-pandas
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q "${missing[@]}"
fi
if ! command -v go >/dev/null 2>&1 && [ -x /usr/local/go/bin/go ]; then
	echo "install-deps: Go is at /usr/local/go/bin; add it to PATH"
fi
