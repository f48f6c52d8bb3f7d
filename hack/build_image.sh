#!/usr/bin/env bash
# Build the image the chart runs (the repository's Dockerfile) with podman/buildah, no Docker engine and no container
# registry needed, then check that `sedna-gm --version` and `sedna-lc --version` run inside it.
#
#   hack/build_image.sh [--tag IMAGE] [--base IMAGE] [--rootfs DIR] [--mirror URL]
#
# --base IMAGE   build FROM this image (e.g. docker.io/library/python:3.11-slim where a registry is reachable);
#                without it, a Debian bookworm base (python3, python3-venv, ca-certificates) is made with debootstrap
#                into --rootfs (default /var/tmp/sedna-base-bookworm, kept for the next run) from --mirror (default
#                http://deb.debian.org/debian) and imported as localhost/sedna-base:bookworm (reused once there).
# --tag IMAGE    the image built (default localhost/sedna-controlplane:<version in setup.cfg>).
#
# Needs root (debootstrap, storage) and Debian's packages: apt-get install -y buildah podman debootstrap.
# STORAGE_DRIVER (default vfs: works in containers and sandboxes; overlay is faster where the kernel allows it).
# The build stage fetches the dependencies from PyPI; the machine's CA bundle (/etc/ssl/certs/ca-certificates.crt,
# or CA_FILE) is mounted for pip during the build only, for machines behind a TLS-intercepting proxy: it is not in
# the image. docs/real-cluster.md ("The image") has a transcript of a run and how to push the image.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
version=$(sed -n 's/^version *= *//p' "$repo/setup.cfg")
tag="localhost/sedna-controlplane:$version"
base=""
rootfs=/var/tmp/sedna-base-bookworm
mirror=http://deb.debian.org/debian
base_tag=localhost/sedna-base:bookworm
ca_file=${CA_FILE:-/etc/ssl/certs/ca-certificates.crt}
storage=(--storage-driver "${STORAGE_DRIVER:-vfs}")

while [ $# -gt 0 ]; do
  case "$1" in
    --tag) tag=$2; shift 2 ;;
    --base) base=$2; shift 2 ;;
    --rootfs) rootfs=$2; shift 2 ;;
    --mirror) mirror=$2; shift 2 ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build_image.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

for tool in podman buildah; do
  command -v "$tool" >/dev/null || { echo "build_image.sh: $tool not found: apt-get install -y buildah podman debootstrap" >&2; exit 2; }
done

step() { printf '==> [%4ss] %s\n' "$SECONDS" "$*"; }  # seconds since the start

if [ -z "$base" ]; then
  base=$base_tag
  if podman "${storage[@]}" image exists "$base"; then
    step "base image $base exists: reused (podman rmi $base to make it anew)"
  else
    if [ ! -x "$rootfs/usr/bin/python3" ]; then
      command -v debootstrap >/dev/null || { echo "build_image.sh: debootstrap not found: apt-get install -y debootstrap" >&2; exit 2; }
      step "debootstrap bookworm (minbase + python3, python3-venv, ca-certificates) into $rootfs from $mirror"
      debootstrap --variant=minbase --include=python3,python3-venv,ca-certificates bookworm "$rootfs" "$mirror"
    fi
    step "importing $rootfs as $base"
    tar -C "$rootfs" -c . | podman "${storage[@]}" import - "$base"
  fi
fi

build_args=(--build-arg "BASE=$base")
if [ -f "$ca_file" ]; then
  build_args+=(--volume "$ca_file:/run/build-ca.crt:ro" --build-arg PIP_CERT=/run/build-ca.crt)
fi
step "building $tag FROM $base (Dockerfile of $repo)"
podman "${storage[@]}" build --isolation chroot --network host "${build_args[@]}" -t "$tag" -f "$repo/Dockerfile" "$repo"

# `buildah run --isolation chroot` works where `podman run` cannot start a container (no cgroups or rlimits to set)
step "smoke test: sedna-gm --version and sedna-lc --version inside $tag"
ctr=$(buildah "${storage[@]}" from "$tag")
trap 'buildah "${storage[@]}" rm "$ctr" >/dev/null' EXIT
for program in sedna-gm sedna-lc; do
  out=$(buildah "${storage[@]}" run --isolation chroot "$ctr" -- "$program" --version)
  echo "    $out"
  [ "$out" = "$program $version" ] || { echo "build_image.sh: expected '$program $version', got '$out'" >&2; exit 1; }
done
echo "    runs as uid $(buildah "${storage[@]}" run --isolation chroot "$ctr" -- id -u) (the chart's GM runs as 65532, its LC as 0)"
step "built $tag ($(podman "${storage[@]}" image inspect --format '{{.Size}}' "$tag" | awk '{printf "%.0f MB", $1/1e6}'))"
echo "    push it: podman ${storage[*]} push $tag <registry>/sedna-controlplane:$version"
