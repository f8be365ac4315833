//! One measured case on one arch: the table row and the JSON line.

use crate::cases::Case;
use crate::timing::Stats;

/// A measured case.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Case name.
    pub case: String,
    /// `"layer"` or `"model"`.
    pub group: &'static str,
    /// Arch name.
    pub arch: &'static str,
    /// Multiply-accumulates per run.
    pub macs: u64,
    /// FLOPs per run.
    pub flops: f64,
    /// Compulsory bytes per run (input + output + weights).
    pub bytes: u64,
    /// True if the work is FMAs (else `pct_peak` is not given).
    pub fma: bool,
    /// Timing, seconds.
    pub stats: Stats,
    /// FMA peak of the case's arch, GFLOP/s (`None`: the reference arch).
    pub peak_gflops: Option<f64>,
    /// Blocking description.
    pub blocking: String,
    /// Output tile (`O_wb`, `TC`) of a single layer.
    pub tile: Option<(usize, usize)>,
}

impl Row {
    /// The row of `case` timed as `stats`, against `peak_gflops`.
    pub fn new(case: &Case, group: &'static str, stats: Stats, peak_gflops: Option<f64>) -> Row {
        Row {
            case: case.name.clone(),
            group,
            arch: case.arch.name(),
            macs: case.macs,
            flops: case.flops(),
            bytes: case.bytes,
            fma: case.fma,
            stats,
            peak_gflops,
            blocking: case.blocking.clone(),
            tile: case.tile,
        }
    }

    /// GFLOP/s of the median run.
    pub fn gflops(&self) -> f64 {
        self.flops / self.stats.median / 1e9
    }

    /// Percent of the arch's FMA peak (FMA work only).
    pub fn pct_peak(&self) -> Option<f64> {
        let peak = self.peak_gflops.filter(|p| *p > 0.0)?;
        self.fma.then(|| 100.0 * self.gflops() / peak)
    }

    /// Compulsory traffic over the median run, GB/s.
    pub fn gbps(&self) -> f64 {
        self.bytes as f64 / self.stats.median / 1e9
    }

    /// FLOPs per compulsory byte.
    pub fn intensity(&self) -> f64 {
        self.flops / self.bytes as f64
    }

    /// The table's header line.
    pub fn header() -> String {
        format!(
            "{:<20} {:<9} {:>9} {:>10} {:>10} {:>8} {:>7} {:>7} {:>6}  blocking",
            "case", "arch", "MMAC", "median µs", "min µs", "GFLOP/s", "% peak", "GB/s", "AI"
        )
    }

    /// The table line.
    pub fn line(&self) -> String {
        let pct = self
            .pct_peak()
            .map_or_else(|| "-".to_string(), |p| format!("{p:.1}"));
        format!(
            "{:<20} {:<9} {:>9.3} {:>10.1} {:>10.1} {:>8.1} {:>7} {:>7.1} {:>6.2}  {}",
            self.case,
            self.arch,
            self.macs as f64 / 1e6,
            self.stats.median * 1e6,
            self.stats.min * 1e6,
            self.gflops(),
            pct,
            self.gbps(),
            self.intensity(),
            self.blocking
        )
    }

    /// One JSON object on one line (`benches/peers/peers.py` reads `case`,
    /// `arch`, `median_us` and `min_us`).
    pub fn json(&self) -> String {
        let opt = |v: Option<f64>| v.map_or_else(|| "null".to_string(), |v| format!("{v:.2}"));
        let (o_wb, tc) = match self.tile {
            Some((o, t)) => (o.to_string(), t.to_string()),
            None => ("null".into(), "null".into()),
        };
        format!(
            concat!(
                "{{\"case\":{},\"kind\":\"{}\",\"arch\":\"{}\",\"macs\":{},\"flops\":{},",
                "\"bytes\":{},\"median_us\":{:.3},\"min_us\":{:.3},\"runs\":{},",
                "\"gflops\":{:.3},\"peak_gflops\":{},\"pct_peak\":{},\"gbps\":{:.3},",
                "\"intensity\":{:.4},\"blocking\":{},\"o_wb\":{},\"tc\":{}}}"
            ),
            json_str(&self.case),
            self.group,
            self.arch,
            self.macs,
            self.flops,
            self.bytes,
            self.stats.median * 1e6,
            self.stats.min * 1e6,
            self.stats.runs,
            self.gflops(),
            opt(self.peak_gflops),
            opt(self.pct_peak()),
            self.gbps(),
            self.intensity(),
            json_str(&self.blocking),
            o_wb,
            tc
        )
    }
}

/// `s` as a JSON string literal.
pub fn json_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(fma: bool) -> Row {
        Row {
            case: "conv 3x3 48x48x16".into(),
            group: "layer",
            arch: "avx512",
            macs: 1_000_000,
            flops: if fma { 2e6 } else { 1e6 },
            bytes: 100_000,
            fma,
            stats: Stats {
                median: 20e-6,
                min: 19e-6,
                quiet: 19.5e-6,
                runs: 12,
            },
            peak_gflops: Some(200.0),
            blocking: "O_wb=8 TC=16".into(),
            tile: Some((8, 16)),
        }
    }

    #[test]
    fn derived_numbers() {
        let r = row(true);
        assert!((r.gflops() - 100.0).abs() < 1e-9);
        assert!((r.pct_peak().unwrap() - 50.0).abs() < 1e-9);
        assert!((r.gbps() - 5.0).abs() < 1e-9);
        assert!((r.intensity() - 20.0).abs() < 1e-12);
        assert_eq!(row(false).pct_peak(), None);
        let r = Row {
            peak_gflops: None,
            ..row(true)
        };
        assert_eq!(r.pct_peak(), None);
        assert!(r.json().contains("\"peak_gflops\":null,\"pct_peak\":null"));
    }

    #[test]
    fn json_line() {
        let j = row(true).json();
        assert!(j.starts_with("{\"case\":\"conv 3x3 48x48x16\",\"kind\":\"layer\",\"arch\":\"avx512\",\"macs\":1000000,"));
        assert!(
            j.contains("\"median_us\":20.000,\"min_us\":19.000,\"runs\":12,"),
            "{j}"
        );
        assert!(j.contains("\"pct_peak\":50.00,\"gbps\":5.000,"), "{j}");
        assert!(
            j.ends_with("\"blocking\":\"O_wb=8 TC=16\",\"o_wb\":8,\"tc\":16}"),
            "{j}"
        );
        assert!(row(false).json().contains("\"pct_peak\":null"));
        assert_eq!(json_str("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
    }
}
