use small_core::{Blocked, layer};
use std::time::Instant;

#[layer(fh = 3, fw = 3, fc = 16, k = 16, padding = same)]
pub struct Conv;

fn main() -> Result<(), small_core::Error> {
    let (h, w) = (48, 48);
    let weights: Vec<f32> = (0..Conv::WEIGHTS_LEN)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
        .collect();
    let input: Vec<f32> = (0..h * w * 16)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
        .collect();
    let x = Blocked::from_nhwc(h, w, 16, &input)?;
    for arch in small_core::arch::available() {
        let conv = Conv::with_arch(arch, &weights, None)?;
        let mut y = conv.alloc_output(&x)?;
        for _ in 0..200 {
            conv.forward(&x, &mut y)?;
        }
        let mut times = vec![];
        for _ in 0..200 {
            let t = Instant::now();
            conv.forward(&x, &mut y)?;
            times.push(t.elapsed().as_secs_f64());
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let med = times[times.len() / 2];
        let flops = 2.0 * (h * w * 16 * 16 * 9) as f64;
        println!(
            "{arch:?}: {:.1} us, {:.1} GFLOP/s",
            med * 1e6,
            flops / med / 1e9
        );
    }
    Ok(())
}
