//! Which arch runs the generated kernels.
//!
//! The proc macro compiles every registered arch whose `cfg` matches the
//! target; at run time one of them is chosen. With `std`, the CPU is
//! probed once and the choice cached; the environment variable
//! `SMALL_ARCH=<name>` forces an arch (an error if it is unknown or the
//! CPU cannot run it). Without `std`, the choice follows the target
//! features the crate was compiled with. A layer records the arch it was
//! packed for, so a layer never executes an instruction the CPU lacks.

pub use arch_defs::ArchId as Arch;

use crate::Error;

/// Checks that `arch` can run here.
pub fn require(arch: Arch) -> Result<Arch, Error> {
    if arch.available() {
        Ok(arch)
    } else {
        Err(Error::ArchUnavailable { name: arch.name() })
    }
}

/// Parses an arch name (as in `SMALL_ARCH`) and checks that it can run here.
pub fn parse(name: &str) -> Result<Arch, Error> {
    let registered = arch_defs::NAMES;
    require(Arch::from_name(name.trim()).ok_or(Error::UnknownArch { registered })?)
}

/// Every registered arch that can run here, best first.
pub fn available() -> impl Iterator<Item = Arch> {
    Arch::ALL.iter().copied().filter(|a| a.available())
}

/// The environment variable that forces an arch (std only).
pub const VAR: &str = "SMALL_ARCH";

/// The arch `value` of the environment variable `var` names, if it can run
/// here; else [`Error::ArchVar`] naming both (the value is leaked: call it
/// once per process, as [`selected`] does).
#[cfg(feature = "std")]
fn from_var(var: &'static str, value: &str) -> Result<Arch, Error> {
    let value = value.trim();
    let fail = |unavailable| {
        let listed = if unavailable {
            let here: std::vec::Vec<&str> = available().map(|a| a.name()).collect();
            std::boxed::Box::leak(here.join(" ").into_boxed_str())
        } else {
            arch_defs::NAMES
        };
        Error::ArchVar {
            var,
            value: std::boxed::Box::leak(value.into()),
            unavailable,
            listed,
        }
    };
    match Arch::from_name(value) {
        None => Err(fail(false)),
        Some(a) if !a.available() => Err(fail(true)),
        Some(a) => Ok(a),
    }
}

/// The arch new layers use by default: `SMALL_ARCH` if set (std only),
/// else the best one the CPU supports. Computed once.
pub fn selected() -> Result<Arch, Error> {
    #[cfg(feature = "std")]
    {
        static CHOICE: std::sync::OnceLock<Result<Arch, Error>> = std::sync::OnceLock::new();
        CHOICE
            .get_or_init(|| {
                let value = std::env::var_os(VAR).unwrap_or_default();
                let value = value.to_string_lossy();
                if value.trim().is_empty() {
                    Ok(Arch::best_available())
                } else {
                    from_var(VAR, &value)
                }
            })
            .clone()
    }
    #[cfg(not(feature = "std"))]
    Ok(Arch::best_available())
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[cfg(feature = "std")]
    #[test]
    fn a_bad_small_arch_names_the_variable_its_value_and_the_valid_ones() {
        let e = from_var(VAR, " bogus ").unwrap_err();
        assert_eq!(
            e,
            Error::ArchVar {
                var: "SMALL_ARCH",
                value: "bogus",
                unavailable: false,
                listed: arch_defs::NAMES,
            }
        );
        let mut want = std::string::String::from("SMALL_ARCH=bogus: unknown arch; valid:");
        for a in Arch::ALL {
            want += " ";
            want += a.name();
        }
        assert_eq!(e.to_string(), want);
        assert!(want.contains(" reference") && want.contains(" avx2"));
        // The last available arch: `reference`, or NEON where it is the
        // baseline and the portable kernels are left out.
        let last = available().last().unwrap();
        assert_eq!(from_var(VAR, last.name()), Ok(last));
        if let Some(missing) = Arch::ALL.iter().find(|a| !a.available()) {
            let e = from_var(VAR, missing.name()).unwrap_err().to_string();
            let head = std::format!(
                "SMALL_ARCH={}: arch not available on this target or CPU; available here:",
                missing.name()
            );
            assert!(e.starts_with(&head), "{e}");
            // Listed once: in the head, not among the available ones.
            assert_eq!(e.matches(missing.name()).count(), 1, "{e}");
            assert!(e.ends_with(&std::format!(" {}", last.name())), "{e}");
        }
    }

    #[test]
    fn names_parse_and_unknown_names_fail() {
        let last = available().last().unwrap();
        assert_eq!(parse(last.name()), Ok(last));
        let registered = arch_defs::NAMES;
        assert_eq!(parse("avx9"), Err(Error::UnknownArch { registered }));
        assert!(parse("avx9").unwrap_err().to_string().contains(" avx2 "));
        #[cfg(not(target_arch = "aarch64"))]
        {
            assert_eq!(last, Arch::Reference);
            assert_eq!(parse("neon"), Err(Error::ArchUnavailable { name: "neon" }));
        }
        #[cfg(target_arch = "aarch64")]
        {
            assert_eq!(last, Arch::Neon);
            assert_eq!(parse("avx2"), Err(Error::ArchUnavailable { name: "avx2" }));
            let name = "reference";
            assert_eq!(parse(name), Err(Error::ArchUnavailable { name }));
        }
    }
}
