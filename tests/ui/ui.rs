//! trybuild UI tests of `#[layer]`: every layer class that must expand
//! (and run), and every invalid declaration that must be a compile error
//! spanned at the offending argument. The `.stderr` files are the
//! reviewed messages; regenerate with
//! `TRYBUILD=overwrite cargo test -p small-ui-tests` and read the diff.

/// The proc macro runs on the build host whatever the target, so the
/// cases are the same under the aarch64 cross build; running them there
/// again would only cost a minute of CI and tie the `.stderr` files to a
/// second compiler version.
#[test]
#[cfg_attr(
    not(target_arch = "x86_64"),
    ignore = "host-only: the macro runs on the build host"
)]
fn ui() {
    stage_rejected_models();
    let t = trybuild::TestCases::new();
    t.pass("pass/*.rs");
    t.compile_fail("fail/*.rs");
}

/// `tflite_model!` paths are relative to the crate's manifest: for the UI
/// cases, trybuild's project in `<target>/tests/trybuild/small-ui-tests`. The
/// files they reject (`tests/data/tflite/rejected`) are copied there, so
/// the cases name them as `rejected/<file>` wherever the target dir is.
fn stage_rejected_models() {
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let project = tmp.parent().unwrap().join("tests/trybuild/small-ui-tests");
    let to = project.join("rejected");
    std::fs::create_dir_all(&to).unwrap();
    let from = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../data/tflite/rejected");
    for e in std::fs::read_dir(&from).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, to.join(p.file_name().unwrap())).unwrap();
    }
}
