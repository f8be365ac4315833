//! trybuild UI tests of `#[layer]`: every layer class that must expand
//! (and run), and every invalid declaration that must be a compile error
//! spanned at the offending argument. The `.stderr` files are the
//! reviewed messages; regenerate with
//! `TRYBUILD=overwrite cargo test -p small-tests --test ui` and read the diff.

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
    let t = trybuild::TestCases::new();
    t.pass("ui/pass/*.rs");
    t.compile_fail("ui/fail/*.rs");
}
