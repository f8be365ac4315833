# shellcheck shell=bash
# Helpers shared by scripts/setup and scripts/test. Source it; do not run it.

# Repository root (the parent of scripts/).
SMALL_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export SMALL_ROOT

# Host builds use rustup's toolchain (rustfmt, clippy); Debian's cargo/rustc
# 1.96 in /usr/bin are for the cross builds only and are called by path. Make
# sure rustup's proxies come first even if PATH lists /usr/bin before them.
_rustup_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
if [[ -x "$_rustup_bin/cargo" ]]; then
    PATH="$_rustup_bin:$PATH"
    export PATH
fi
unset _rustup_bin

# Pinned tool versions.
MDBOOK_VERSION="0.5.4"

# Debian packages the cross builds and emulated runs need (see
# shared/TOOLCHAINS.md). `pkg[:arch]|what it provides`.
SMALL_APT_PACKAGES=(
    "qemu-user|qemu-aarch64 (runs aarch64 test binaries)"
    "qemu-system-arm|qemu-system-arm (runs Cortex-M4 firmware)"
    "rustc-web|Debian rustc 1.96 (cross compiler)"
    "cargo-web|Debian cargo 1.96 (cross builds)"
    "libstd-rust-web-dev:arm64|aarch64 std for Debian rustc"
    "rust-web-src|Rust library source (-Zbuild-std for thumbv7em)"
    "rust-web-llvm|/usr/bin/rust-lld (a Recommends of rustc-web)"
    "lld-22|LLVM linker behind /usr/bin/rust-lld"
    "gcc-aarch64-linux-gnu|aarch64 linker driver"
    "libc6-dev-arm64-cross|aarch64 glibc (static) for +crt-static"
)

# Debian's compiler, used for the cross builds only.
DEB_CARGO=/usr/bin/cargo
DEB_RUSTC=/usr/bin/rustc

# `pkg_installed NAME[:ARCH]` -> 0 when dpkg has it fully installed.
pkg_installed() {
    local st
    st="$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" || return 1
    [[ "$st" == "install ok installed" ]]
}

# Run as root, through sudo when needed (CI and the dev VMs are root).
as_root() {
    if [[ "$(id -u)" -eq 0 ]]; then
        "$@"
    elif command -v sudo >/dev/null 2>&1; then
        sudo -n "$@"
    else
        echo "error: need root for: $*" >&2
        return 1
    fi
}

# Wall clock in seconds (integer).
now_s() { date +%s; }
