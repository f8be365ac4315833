//! `--help` of every example binary exits 0 with its usage, and a bad
//! argument exits non-zero. The binaries: `small-bench` (this package).
//! `examples/mlperf_tiny` is left out for now (its CLI is being reworked); the firmware
//! (`examples/mcu`) takes no arguments, and `examples/firmware.rs` is a
//! library module.

use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_small-bench");

#[test]
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
fn a_bad_argument_fails_and_points_to_help() {
    let out = Command::new(BIN).arg("--no-such-option").output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--help"));
}
