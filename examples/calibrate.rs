//! The cost model's calibration measured on the running machine, as
//! Ramírez et al. calibrate theirs: a few probe layers, none of them a
//! layer of the four networks, timed alone on one thread, and the
//! calibration ([`peak::calibrate`]: cycles per call, cycles per tile
//! accumulator and the fraction of the FMA rate reached, per element type)
//! that predicts them best. The main job and the bench then predict every
//! other layer with it, so their error figure is out of sample.
//!
//! Each probe leans on one term of the model: a 1x1 layer on one pixel
//! (the call), 12 -> 16 channels over many pixels (the tiles' fixed work:
//! 16 real output channels, as in the networks' layers; 8 of 16 lanes
//! real requantized 30 % faster per tile in `i8` on the Xeon VM), 64 x
//! 64 channels (the multiply-adds), a 3x3 conv with padding (windows and
//! border tiles), a depthwise layer (channelwise kernels) and a dense
//! layer (its weights streamed).

use crate::peak::{self, Fit, Measured};
use small_core::ir::cost::{Rates, Tile};
use small_core::reference::int8::Requant;
use small_core::{Arch, Blocked, Dims, Filter, layer};
use std::time::Duration;

const MS: Duration = Duration::from_millis(1);

#[layer(fh = 1, fw = 1, fc = 12, k = 16)]
struct Point12;
#[layer(fh = 1, fw = 1, fc = 64, k = 64)]
struct Point64;
#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same)]
struct Conv16;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same)]
struct Depth32;
#[layer(fh = 1, fw = 1, fc = 256, k = 64)]
struct Dense;

#[layer(fh = 1, fw = 1, fc = 12, k = 16, dtype = i8)]
struct Point12I8;
#[layer(fh = 1, fw = 1, fc = 64, k = 64, dtype = i8)]
struct Point64I8;
#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same, dtype = i8)]
struct Conv16I8;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, dtype = i8)]
struct Depth32I8;
#[layer(fh = 1, fw = 1, fc = 256, k = 64, dtype = i8)]
struct DenseI8;

/// `n` values of a fixed pseudo-random sequence, mapped by `f`.
fn values<T>(n: usize, f: impl Fn(usize) -> T) -> Vec<T> {
    (0..n).map(|i| f((i * 37 + 11) % 251)).collect()
}

/// Times `$layer` (built from a filter of pseudo-random weights, `Filter::
/// $filter`, and the quantization `$q` of an `i8` layer) on each `(h, w)`
/// input of `$sizes`, and pushes the measurements to `$out`; `$elem` maps
/// a value of the pseudo-random sequence to an element.
macro_rules! probe {
    ($out:ident, $arch:ident, $elem:ident: $layer:ident $filter:ident on $sizes:expr $(, $q:expr)?) => {{
        let w = values($layer::WEIGHTS_LEN, $elem);
        let l = $layer::with_arch($arch, Filter::$filter(&w), None $(, $q)?)?;
        let spec = $layer::SPEC;
        let tile = Tile::of(l.blocking(), &$arch.params().machine, &spec);
        for (h, w) in $sizes {
            let dims = Dims {
                c: spec.in_channels(),
                h,
                w,
            };
            let x = Blocked::from_nhwc(dims, &values(dims.c * h * w, $elem))?;
            let mut y = l.alloc_output(&x)?;
            l.forward(&x, &mut y)?;
            let call = || l.forward(&x, &mut y).expect("ran above");
            let runs = peak::call_times(call, MS, MS * 4, 10);
            let seconds = runs[runs.len() / 10].as_secs_f64();
            let out = y.dims();
            $out.push(Measured {
                spec,
                tile,
                input: (h, w),
                output: (out.h, out.w),
                pass_bytes: 0,
                seconds,
            });
        }
    }};
}

/// The probes of `f32` (`i8 = false`) or `i8` on `arch` ([`PROBES`]
/// measurements), timed on whatever thread count is set (the caller sets
/// one).
pub fn probes(arch: Arch, i8: bool) -> Result<Vec<Measured>, small_core::Error> {
    let mut out = Vec::new();
    let (one, many, square, small) = ([(1, 1)], [(1, 1), (32, 32)], [(16, 16)], [(8, 8)]);
    if i8 {
        // Per-channel scales, as TFLite's int8 convolutions have them
        // (one scale for all takes a shorter STORE).
        let rescale: Vec<_> = (0..64)
            .map(|c| small_core::ir::quant::Rescale::conv(0.02, 0.01 + 0.0001 * c as f32, 0.05))
            .collect();
        let q = |channels: usize| Requant {
            input_zero_point: -3,
            rescale: &rescale[..channels],
            output_zero_point: 5,
            min: -128,
            max: 127,
        };
        let e = |v: usize| (v as i32 - 125) as i8;
        probe!(out, arch, e: Point12I8 ohwi on many, &q(16));
        probe!(out, arch, e: Point64I8 ohwi on small, &q(64));
        probe!(out, arch, e: Conv16I8 ohwi on square, &q(16));
        probe!(out, arch, e: Depth32I8 depthwise on square, &q(32));
        probe!(out, arch, e: DenseI8 ohwi on one, &q(64));
    } else {
        let e = |v: usize| v as f32 / 251.0 - 0.5;
        probe!(out, arch, e: Point12 ohwi on many);
        probe!(out, arch, e: Point64 ohwi on small);
        probe!(out, arch, e: Conv16 ohwi on square);
        probe!(out, arch, e: Depth32 depthwise on square);
        probe!(out, arch, e: Dense ohwi on one);
    }
    Ok(out)
}

/// [`probes`] taken eight times, spread over half a second, each
/// probe's least time kept: the host slows a shared VM's core for
/// stretches of up to seconds, and the model describes the core when it
/// does not.
fn quiet_probes(arch: Arch, i8: bool) -> Result<Vec<Measured>, small_core::Error> {
    let mut best = probes(arch, i8)?;
    for _ in 0..7 {
        for (b, m) in best.iter_mut().zip(probes(arch, i8)?) {
            b.seconds = b.seconds.min(m.seconds);
        }
    }
    Ok(best)
}

/// The cost model's numbers for the running machine: its measured peak
/// and bandwidths with the calibration fitted to the probes.
#[derive(Debug, Clone)]
pub struct Calibration {
    /// What the model predicts with.
    pub rates: Rates,
    /// The fit to the `f32` probes and to the `i8` ones (`None` where
    /// they could not run), in cycles.
    pub fits: [Option<Fit>; 2],
    /// Why the probes of a type could not run.
    pub errors: [Option<small_core::Error>; 2],
}

impl std::fmt::Display for Calibration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "cost model calibrated on {PROBES} probe layers per type:"
        )?;
        for (d, name) in ["f32", "i8"].iter().enumerate() {
            if let Some(e) = &self.errors[d] {
                write!(f, " {name}: not calibrated, its probes failed ({e});")?;
                continue;
            }
            match self.fits[d] {
                Some(x) => write!(
                    f,
                    " {name}: call {} cycles, tile {} cycles per accumulator, efficiency {:.2} (mean error {:.0}% on the probes);",
                    x.call_cycles,
                    x.tile_cycles,
                    x.efficiency,
                    100.0 * x.error
                )?,
                None => write!(f, " {name}: not calibrated (the stock numbers);")?,
            }
        }
        Ok(())
    }
}

/// Probe measurements per element type (see [`probes`]).
pub const PROBES: usize = 6;

/// `base` (the machine's measured peak and bandwidths, as
/// [`peak::rates`] makes them) calibrated on this machine: each element
/// type's call, tile and efficiency numbers fitted to probe layers timed
/// on one thread. `base`'s numbers stay for an element type whose probes
/// cannot run.
pub fn calibrated(arch: Arch, base: &Rates) -> Calibration {
    let threads = small_core::threads::threads();
    small_core::threads::set_threads(1);
    let mut c = Calibration {
        rates: *base,
        fits: [None; 2],
        errors: [None, None],
    };
    // The call's cost is the same code for both types: fitted to the
    // `f32` probes, kept for the `i8` ones.
    let mut call = None;
    for (d, i8) in [(0, false), (1, true)] {
        let layers = match quiet_probes(arch, i8) {
            Ok(l) => l,
            Err(e) => {
                c.errors[d] = Some(e);
                continue;
            }
        };
        debug_assert_eq!(layers.len(), PROBES);
        if let Some(f) = peak::calibrate(&layers, base, call) {
            let fitted = f.rates(base);
            call = Some(f.call_cycles);
            c.rates.call = fitted.call;
            c.rates.tile[d] = fitted.tile[d];
            c.rates.efficiency[d] = fitted.efficiency[d];
            c.fits[d] = Some(f);
        }
    }
    small_core::threads::set_threads(threads);
    c
}
