//! `SMALL_ARCH` forces the arch of new layers, and an unknown or
//! unavailable name is an error, never a silent fallback. The choice is
//! cached per process, so each case runs this test binary again as a child.

use small_core::{Arch, layer};
use std::process::Command;

#[layer(fh = 1, fw = 1, fc = 1, k = 1, g = 4, reduction = max)]
struct Pool;

/// Runs in the child only (ignored otherwise): prints what was selected.
#[test]
#[ignore = "run by small_arch_forces_the_arch_or_fails with SMALL_ARCH set"]
fn child_print_selected() {
    println!("selected: {:?}", small_core::arch::selected());
    println!("layer: {:?}", Pool::new().map(|p| p.arch()));
}

fn child(value: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "child_print_selected",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("SMALL_ARCH", value)
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Spawning the test binary again needs it to run natively: host only.
#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "re-executes itself; native runs only"
)]
fn small_arch_forces_the_arch_or_fails() {
    let out = child("reference");
    assert!(out.contains("selected: Ok(Reference)"), "{out}");
    assert!(out.contains("layer: Ok(Reference)"), "{out}");
    let out = child("avx9");
    assert!(out.contains("selected: Err(UnknownArch)"), "{out}");
    assert!(out.contains("layer: Err(UnknownArch)"), "{out}");
    if let Some(missing) = Arch::ALL.iter().find(|a| !a.available()) {
        let out = child(missing.name());
        let want = format!("Err(ArchUnavailable {{ name: \"{}\" }})", missing.name());
        assert!(out.contains(&format!("layer: {want}")), "{out}");
    }
    for arch in small_core::arch::available() {
        let out = child(arch.name());
        assert!(out.contains(&format!("layer: Ok({arch:?})")), "{out}");
    }
}
