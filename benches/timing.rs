//! Timing rule of the bench (and of `benches/peers/peers.py`): a warm-up,
//! then individually timed runs until both a minimum time and a minimum
//! count are reached; the median and the minimum are reported.

use std::time::Instant;

/// How long to time one case.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Timing {
    /// Seconds of untimed runs first (caches, branch predictors, clocks).
    pub warmup: f64,
    /// Seconds of timed runs, at least.
    pub min_time: f64,
    /// Timed runs, at least.
    pub min_runs: usize,
}

impl Timing {
    /// The reported numbers: warm-up >= 0.2 s, then >= 1 s and >= 10 runs.
    pub const FULL: Timing = Timing {
        warmup: 0.2,
        min_time: 1.0,
        min_runs: 10,
    };
    /// `--quick`: a smoke test, not a measurement.
    pub const QUICK: Timing = Timing {
        warmup: 0.01,
        min_time: 0.05,
        min_runs: 3,
    };
}

/// Seconds per run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stats {
    /// Median run.
    pub median: f64,
    /// Fastest run.
    pub min: f64,
    /// 10th percentile run: the case while the host leaves the core alone
    /// (what the cost model, from the machine's best rates, predicts).
    pub quiet: f64,
    /// Timed runs.
    pub runs: usize,
}

impl Stats {
    /// Statistics of `runs` (seconds each); `None` if empty.
    pub fn of(mut runs: Vec<f64>) -> Option<Stats> {
        if runs.is_empty() {
            return None;
        }
        runs.sort_by(f64::total_cmp);
        let n = runs.len();
        let median = if n % 2 == 1 {
            runs[n / 2]
        } else {
            (runs[n / 2 - 1] + runs[n / 2]) / 2.0
        };
        Some(Stats {
            median,
            min: runs[0],
            quiet: runs[n / 10],
            runs: n,
        })
    }
}

/// Times `f` by the rule of `t`; the first error stops it.
pub fn time<E>(t: Timing, mut f: impl FnMut() -> Result<(), E>) -> Result<Stats, E> {
    let start = Instant::now();
    loop {
        f()?;
        if start.elapsed().as_secs_f64() >= t.warmup {
            break;
        }
    }
    let mut runs = Vec::new();
    let start = Instant::now();
    while runs.len() < t.min_runs.max(1) || start.elapsed().as_secs_f64() < t.min_time {
        let r = Instant::now();
        f()?;
        runs.push(r.elapsed().as_secs_f64());
    }
    Ok(Stats::of(runs).expect("at least one run"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        let s = Stats::of(vec![3.0, 1.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min, s.runs), (2.0, 1.0, 3));
        let s = Stats::of(vec![4.0, 1.0, 3.0, 2.0]).unwrap();
        assert_eq!((s.median, s.min), (2.5, 1.0));
        assert!(Stats::of(Vec::new()).is_none());
    }

    #[test]
    fn at_least_min_runs() {
        let mut n = 0;
        let t = Timing {
            warmup: 0.0,
            min_time: 0.0,
            min_runs: 7,
        };
        let s = time(t, || {
            n += 1;
            Ok::<(), ()>(())
        })
        .unwrap();
        assert_eq!(s.runs, 7);
        assert_eq!(n, 8); // one warm-up run
        assert_eq!(time(t, || Err::<(), _>("boom")), Err("boom"));
    }
}
