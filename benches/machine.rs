//! This machine: the CPU's name, each arch's single-core FMA peak (the
//! probe of `small_examples::peak`, shared with the main job), and the
//! single-core read bandwidth of L1, L2 and DRAM. The per-arch code comes
//! from the registered arch list (`fma_probe!`, `simd_dispatch!`), so a
//! new arch needs no edit here.

use small_core::Arch;
use small_core::arch_defs::Simd;
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

/// One level of the memory hierarchy as the bench measures it.
#[derive(Debug, Clone, PartialEq)]
pub struct Bandwidth {
    /// `L1`, `L2` or `DRAM`.
    pub level: &'static str,
    /// Size of the buffer read over and over.
    pub bytes: usize,
    /// Best read bandwidth, GB/s (1e9 bytes).
    pub gbps: f64,
}

/// Buffer sizes: well inside L1 (>= 32 KiB on every x86 and Arm core of
/// interest), inside L2 (>= 1 MiB), and at least 4x the last-level cache
/// (64 MiB at least) for DRAM.
pub fn bandwidth_levels() -> [(&'static str, usize); 3] {
    let llc = last_level_cache_bytes().unwrap_or(0);
    [
        ("L1", 16 << 10),
        ("L2", 512 << 10),
        ("DRAM", (64usize << 20).max(4 * llc)),
    ]
}

/// The largest data or unified cache of cpu0 (sysfs), in bytes.
fn last_level_cache_bytes() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|e| {
        let size = std::fs::read_to_string(e.ok()?.path().join("size")).ok()?;
        parse_size(size.trim())
    })
    .max()
}

/// `32768K`, `2M`, `512` -> bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    Some(num.trim().parse::<usize>().ok()? * mult)
}

/// The SIMD the read loop uses: the widest vector arch available.
pub fn read_arch() -> Arch {
    small_core::arch::available()
        .find(|a| a.params().machine.lanes > 1)
        .unwrap_or(Arch::Reference)
}

/// Read bandwidth of each level (see [`bandwidth_levels`]) with
/// [`read_arch`]'s loads: the best of many runs of a read-and-sum loop
/// (runs of >= 0.1 ms, for `total` seconds per level).
pub fn bandwidths(total: f64) -> Vec<Bandwidth> {
    let arch = read_arch();
    bandwidth_levels()
        .into_iter()
        .map(|(level, bytes)| {
            let n = (bytes / 4).div_ceil(STEP) * STEP;
            let buf: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
            let run = |passes: u64| {
                std::hint::black_box(read_sum(arch, &buf, passes as usize));
                (n * 4) as f64 * passes as f64 / 1e9
            };
            Bandwidth {
                level,
                bytes: n * 4,
                gbps: best_rate(1e-4, total, run),
            }
        })
        .collect()
}

/// `f32`s the read loop consumes per iteration: 8 vectors of the widest
/// registered arch, so every buffer size is a multiple of it.
pub const STEP: usize = 8 * widest();

/// The most lanes of any registered arch.
const fn widest() -> usize {
    let (archs, mut i, mut lanes) = (small_core::arch_defs::ARCHS, 0, 1);
    while i < archs.len() {
        if archs[i].machine.lanes > lanes {
            lanes = archs[i].machine.lanes;
        }
        i += 1;
    }
    lanes
}

small_macros::simd_dispatch!();

/// Sum of `passes` reads of `buf` (its length a multiple of [`STEP`]) with
/// `arch`'s vector loads and adds; the reference arch if `arch` is not
/// available here.
pub fn read_sum(arch: Arch, buf: &[f32], passes: usize) -> f32 {
    assert_eq!(
        buf.len() % STEP,
        0,
        "read_sum: length not a multiple of STEP"
    );
    let sum = Sum {
        buf: std::hint::black_box(buf),
        passes,
    };
    simd_dispatch(arch, sum)
        .or_else(|| simd_dispatch(Arch::Reference, sum))
        .expect("the reference arch runs everywhere")
}

/// `passes` sums of `buf` into 8 independent vector accumulators (enough
/// to keep two loads per cycle busy behind a 3-cycle add).
#[derive(Clone, Copy)]
struct Sum<'a> {
    buf: &'a [f32],
    passes: usize,
}

impl SimdFn for Sum<'_> {
    type Output = f32;

    #[inline(always)]
    unsafe fn run<A: Simd<Elem = f32>>(self) -> f32 {
        let (buf, l) = (self.buf, A::LANES);
        // 8 vectors of any arch divide STEP (lane counts divide CB).
        assert_eq!(buf.len() % (8 * l), 0);
        let p = buf.as_ptr();
        // SAFETY: the caller guarantees `A` runs here; every load reads
        // `p[i + k * l .. i + (k + 1) * l]` with `i + 8 * l <= buf.len()`.
        unsafe {
            let (mut a0, mut a1, mut a2, mut a3) = (A::zero(), A::zero(), A::zero(), A::zero());
            let (mut a4, mut a5, mut a6, mut a7) = (A::zero(), A::zero(), A::zero(), A::zero());
            for _ in 0..self.passes {
                let mut i = 0;
                while i + 8 * l <= buf.len() {
                    a0 = A::add(a0, A::load(p.add(i)));
                    a1 = A::add(a1, A::load(p.add(i + l)));
                    a2 = A::add(a2, A::load(p.add(i + 2 * l)));
                    a3 = A::add(a3, A::load(p.add(i + 3 * l)));
                    a4 = A::add(a4, A::load(p.add(i + 4 * l)));
                    a5 = A::add(a5, A::load(p.add(i + 5 * l)));
                    a6 = A::add(a6, A::load(p.add(i + 6 * l)));
                    a7 = A::add(a7, A::load(p.add(i + 7 * l)));
                    i += 8 * l;
                }
            }
            let s = A::add(
                A::add(A::add(a0, a1), A::add(a2, a3)),
                A::add(A::add(a4, a5), A::add(a6, a7)),
            );
            let mut out = [0.0f32; 64];
            A::store(out.as_mut_ptr(), s);
            out[..l].iter().sum()
        }
    }
}

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
