//! The main job. Until the `mlperf-tiny` issue lands the four real
//! networks, this runs a placeholder: one depthwise-separable block of the
//! DS-CNN keyword-spotting network (its first 10x4 stride-2 convolution,
//! a 3x3 depthwise and a 1x1 pointwise, all with ReLU, then a 2x2 max
//! pool), with deterministic built-in weights,
//! through the generated layers on every arch this CPU can run, checked
//! against the small-core reference layers.
//!
//! `cargo run --release --example mlperf_tiny`

use small_core::reference::{self, Conv, Shape, Window};
use small_core::{Activation, Arch, Blocked, Error, Padding, layer};
use std::time::Instant;

#[layer(fh = 10, fw = 4, fc = 1, k = 64, stride = 2, padding = same, activation = relu)]
struct FirstConv;

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 64, padding = same, activation = relu)]
struct Depthwise;

#[layer(fh = 1, fw = 1, fc = 64, k = 64, activation = relu)]
struct Pointwise;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 64, stride = 2, padding = same, reduction = max)]
struct Pool;

/// Deterministic pseudo-random values in [-scale, scale).
fn values(n: usize, seed: u32, scale: f32) -> Vec<f32> {
    let mut s = seed.wrapping_mul(2654435761) | 1;
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 17;
            s ^= s << 5;
            (s as f32 / u32::MAX as f32 * 2.0 - 1.0) * scale
        })
        .collect()
}

struct Block {
    conv: FirstConv,
    dw: Depthwise,
    pw: Pointwise,
    pool: Pool,
}

impl Block {
    fn run(&self, x: &Blocked<Vec<f32>>) -> Result<Blocked<Vec<f32>>, Error> {
        let mut a = self.conv.alloc_output(x)?;
        self.conv.forward(x, &mut a)?;
        let mut b = self.dw.alloc_output(&a)?;
        self.dw.forward(&a, &mut b)?;
        let mut c = self.pw.alloc_output(&b)?;
        self.pw.forward(&b, &mut c)?;
        let mut d = self.pool.alloc_output(&c)?;
        self.pool.forward(&c, &mut d)?;
        Ok(d)
    }
}

fn reference_run(input: &[f32], w: &[Vec<f32>; 3], b: &[Vec<f32>; 3]) -> Result<Vec<f32>, Error> {
    let s0 = Shape::new(49, 10, 1);
    let conv = Conv {
        window: Window::new(10, 4, 2, 2, Padding::Same),
        fc: 1,
        k: 64,
        g: 1,
    };
    let mut a = vec![0.0; 25 * 5 * 64];
    let s1 = reference::conv2d(input, s0, &w[0], Some(&b[0]), conv, &mut a)?;
    reference::activation(&mut a, Activation::Relu);
    let mut d = vec![0.0; s1.len()];
    reference::depthwise_conv2d(
        &a,
        s1,
        &w[1],
        Some(&b[1]),
        Window::new(3, 3, 1, 1, Padding::Same),
        1,
        &mut d,
    )?;
    reference::activation(&mut d, Activation::Relu);
    let pw = Conv {
        window: Window::new(1, 1, 1, 1, Padding::Valid),
        fc: 64,
        k: 64,
        g: 1,
    };
    let mut p = vec![0.0; s1.len()];
    reference::conv2d(&d, s1, &w[2], Some(&b[2]), pw, &mut p)?;
    reference::activation(&mut p, Activation::Relu);
    let mut out = vec![0.0; 13 * 3 * 64];
    reference::max_pool(&p, s1, Window::new(2, 2, 2, 2, Padding::Same), &mut out)?;
    Ok(out)
}

fn main() -> Result<(), Error> {
    println!("small-rs main job (placeholder until the four MLPerf Tiny networks land):");
    println!(
        "DS-CNN block 49x10x1 -> conv 10x4/2 -> dw 3x3 -> pw 1x1 -> max pool, built-in weights\n"
    );
    let input = values(49 * 10, 1, 1.0);
    let w = [
        values(FirstConv::WEIGHTS_LEN, 2, 0.3),
        values(Depthwise::WEIGHTS_LEN, 3, 0.3),
        values(Pointwise::WEIGHTS_LEN, 4, 0.15),
    ];
    let b = [values(64, 5, 0.1), values(64, 6, 0.1), values(64, 7, 0.1)];
    let want = reference_run(&input, &w, &b)?;
    let x = Blocked::from_nhwc(49, 10, 1, &input)?;
    let macs = 25 * 5 * 64 * 40 + 25 * 5 * 64 * 9 + 25 * 5 * 64 * 64;
    println!(
        "{:<10} {:>10} {:>12} {:>10} {:>12}",
        "arch", "MACs", "median us", "GFLOP/s", "max |err|"
    );
    let mut ok = true;
    for arch in small_core::arch::available() {
        let block = Block {
            conv: FirstConv::with_arch(arch, &w[0], Some(&b[0]))?,
            dw: Depthwise::with_arch(arch, &w[1], Some(&b[1]))?,
            pw: Pointwise::with_arch(arch, &w[2], Some(&b[2]))?,
            pool: Pool::with_arch(arch)?,
        };
        let got = block.run(&x)?.to_nhwc();
        let err = got
            .iter()
            .zip(&want)
            .map(|(g, r)| (g - r).abs())
            .fold(0.0f32, f32::max);
        let mut times = Vec::with_capacity(200);
        for _ in 0..200 {
            let t = Instant::now();
            std::hint::black_box(block.run(&x)?);
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(f64::total_cmp);
        let med = times[times.len() / 2];
        println!(
            "{:<10} {:>10} {:>12.1} {:>10.2} {:>12.2e}",
            arch.name(),
            macs,
            med * 1e6,
            2.0 * macs as f64 / med / 1e9,
            err
        );
        // Reduction lengths here are at most 64 products of values < 1.
        ok &= err < 1e-4;
    }
    let missing: Vec<&str> = Arch::ALL
        .iter()
        .filter(|a| !a.available())
        .map(|a| a.name())
        .collect();
    println!("\narches not runnable on this CPU: {missing:?}");
    if !ok {
        eprintln!("check FAILED: generated layers differ from the reference");
        std::process::exit(1);
    }
    println!("check: all arches match the reference layers");
    Ok(())
}
