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
    if let Err(e) = Pool::new() {
        println!("message: {e}");
    }
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
    // Unknown: an error (the arch decides packing and results) that names
    // the variable, its value and every valid name.
    let out = child(" bogus ");
    let want = format!(
        r#"Err(ArchVar {{ var: "SMALL_ARCH", value: "bogus", unavailable: false, listed: {:?} }})"#,
        small_core::arch_defs::NAMES
    );
    assert!(out.contains(&format!("selected: {want}")), "{out}");
    assert!(out.contains(&format!("layer: {want}")), "{out}");
    let names: Vec<&str> = Arch::ALL.iter().map(|a| a.name()).collect();
    let message = format!(
        "message: SMALL_ARCH=bogus: unknown arch; valid: {}\n",
        names.join(" ")
    );
    assert!(out.contains(&message), "{out}");
    if let Some(missing) = Arch::ALL.iter().find(|a| !a.available()) {
        let out = child(missing.name());
        let here: Vec<&str> = small_core::arch::available().map(|a| a.name()).collect();
        let want = format!(
            "Err(ArchVar {{ var: \"SMALL_ARCH\", value: \"{}\", unavailable: true, listed: {:?} }})",
            missing.name(),
            here.join(" ")
        );
        assert!(out.contains(&format!("layer: {want}")), "{out}");
        let message = format!(
            "message: SMALL_ARCH={}: arch not available on this target or CPU; available here: {}\n",
            missing.name(),
            here.join(" ")
        );
        assert!(out.contains(&message), "{out}");
    }
    for arch in small_core::arch::available() {
        let out = child(arch.name());
        assert!(out.contains(&format!("layer: Ok({arch:?})")), "{out}");
    }
}
