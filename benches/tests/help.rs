//! `--help` of every example binary exits 0 with its usage, and a bad
//! argument exits non-zero. The binaries: `small-bench` (this package);
//! `examples/mlperf_tiny`'s argument parsing has unit tests in its own
//! file; the firmware (`examples/mcu`) takes no arguments, and
//! `examples/firmware.rs` is a library module.
//!
//! The aarch64 stage runs this under qemu-user, where the child binary
//! does not start (exit status 127): these tests are x86_64's there.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_small-bench");

#[test]
#[cfg_attr(
    target_arch = "aarch64",
    ignore = "qemu-user does not start the child binary"
)]
fn help_exits_0_with_the_usage() {
    for flag in ["--help", "-h"] {
        let out = Command::new(BIN).arg(flag).output().unwrap();
        assert!(out.status.success(), "small-bench {flag}: {:?}", out.status);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("--threads") && text.contains("--help"),
            "small-bench {flag} printed: {text}"
        );
    }
}

#[test]
#[cfg_attr(
    target_arch = "aarch64",
    ignore = "qemu-user does not start the child binary"
)]
fn a_bad_argument_fails_and_points_to_help() {
    let out = Command::new(BIN).arg("--no-such-option").output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--help"));
}
