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
    require(Arch::from_name(name.trim()).ok_or(Error::UnknownArch)?)
}

/// Every registered arch that can run here, best first.
pub fn available() -> impl Iterator<Item = Arch> {
    Arch::ALL.iter().copied().filter(|a| a.available())
}

/// The arch new layers use by default: `SMALL_ARCH` if set (std only),
/// else the best one the CPU supports. Computed once.
pub fn selected() -> Result<Arch, Error> {
    #[cfg(feature = "std")]
    {
        static CHOICE: std::sync::OnceLock<Result<Arch, Error>> = std::sync::OnceLock::new();
        CHOICE
            .get_or_init(|| match std::env::var("SMALL_ARCH") {
                Ok(name) if !name.trim().is_empty() => parse(&name),
                _ => Ok(Arch::best_available()),
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

    #[test]
    fn names_parse_and_unknown_names_fail() {
        assert_eq!(parse("reference"), Ok(Arch::Reference));
        assert_eq!(parse("avx9"), Err(Error::UnknownArch));
        assert!(Error::UnknownArch.to_string().contains("avx2"));
        assert!(available().any(|a| a == Arch::Reference));
        #[cfg(not(target_arch = "aarch64"))]
        assert_eq!(parse("neon"), Err(Error::ArchUnavailable { name: "neon" }));
        #[cfg(target_arch = "aarch64")]
        assert_eq!(parse("avx2"), Err(Error::ArchUnavailable { name: "avx2" }));
    }
}
