//! This machine: the CPU's name, each arch's single-core FMA peak (the
//! probe of `small_examples::peak`, shared with the main job), and the
//! single-core read bandwidth of L1, L2 and DRAM (both probes in
//! `small_examples::peak`, shared with the main job's per-layer model).
//! The per-arch code comes from the registered arch list (`fma_probe!`,
//! `simd_dispatch!`), so a new arch needs no edit here.

use std::time::{SystemTime, UNIX_EPOCH};

/// The CPU as `/proc/cpuinfo` names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cpu {
    /// `model name` (x86) or `CPU implementer`/`CPU part` (Arm); "unknown"
    /// if the file cannot be read.
    pub name: String,
    /// `cpu family` (x86).
    pub family: Option<u32>,
    /// `model` (x86).
    pub model: Option<u32>,
    /// `stepping` (x86).
    pub stepping: Option<u32>,
}

impl Cpu {
    /// The first processor of `/proc/cpuinfo`.
    pub fn detect() -> Cpu {
        Cpu::parse(&std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default())
    }

    /// The first processor block of a `/proc/cpuinfo` text.
    pub fn parse(text: &str) -> Cpu {
        let block = text.split("\n\n").next().unwrap_or("");
        let field = |key: &str| {
            block.lines().find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == key).then(|| v.trim().to_string())
            })
        };
        let num = |key: &str| field(key).and_then(|v| v.parse().ok());
        let name = field("model name")
            .or_else(|| {
                let (i, p) = (field("CPU implementer")?, field("CPU part")?);
                Some(format!("Arm implementer {i} part {p}"))
            })
            .unwrap_or_else(|| "unknown".into());
        Cpu {
            name,
            family: num("cpu family"),
            model: num("model"),
            stepping: num("stepping"),
        }
    }

    /// `AMD EPYC (family 26, model 2, stepping 1)`.
    pub fn describe(&self) -> String {
        match (self.family, self.model) {
            (Some(f), Some(m)) => {
                let s = self.stepping.map(|s| format!(", stepping {s}"));
                format!(
                    "{} (family {f}, model {m}{})",
                    self.name,
                    s.unwrap_or_default()
                )
            }
            _ => self.name.clone(),
        }
    }
}

/// Today's UTC date, `YYYY-MM-DD`.
pub fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

pub use small_examples::peak::{best_rate, fma_chains, fma_peak};

pub use small_examples::peak::{
    Bandwidth, STEP, bandwidth_levels, bandwidths, parse_size, read_arch, read_sum,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpuinfo_fields() {
        let text = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n\
                    model name\t: AMD EPYC\nstepping\t: 1\n\nprocessor\t: 1\nmodel name\t: other\n";
        let c = Cpu::parse(text);
        assert_eq!(c.name, "AMD EPYC");
        assert_eq!(
            (c.family, c.model, c.stepping),
            (Some(26), Some(2), Some(1))
        );
        assert_eq!(c.describe(), "AMD EPYC (family 26, model 2, stepping 1)");
        assert_eq!(Cpu::parse("").describe(), "unknown");
        let arm = Cpu::parse("CPU implementer\t: 0x41\nCPU part\t: 0xd0c\n");
        assert_eq!(arm.name, "Arm implementer 0x41 part 0xd0c");
    }

    #[test]
    fn dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_780), (2026, 11, 23));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(today().len(), 10);
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("2M"), Some(2 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn read_sum_is_the_sum_on_every_arch() {
        let buf: Vec<f32> = (0..4 * STEP).map(|i| (i % 5) as f32).collect();
        let want: f32 = buf.iter().sum::<f32>() * 3.0;
        for arch in small_core::arch::available() {
            assert_eq!(read_sum(arch, &buf, 3), want, "{}", arch.name());
        }
    }
}
