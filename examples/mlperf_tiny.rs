use small_core::{Blocked, layer};

#[layer(fh = 3, fw = 3, fc = 16, k = 32, g = 1, stride = 2, padding = same, reduction = fma)]
pub struct Conv3x3s2;

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 32, padding = same, activation = relu6)]
pub struct Dw;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 32, stride = 2, reduction = max)]
pub struct Pool;

fn main() -> Result<(), small_core::Error> {
    let (h, w) = (9, 11);
    let weights: Vec<f32> = (0..Conv3x3s2::WEIGHTS_LEN)
        .map(|i| ((i * 7 % 13) as f32 - 6.0) / 10.0)
        .collect();
    let bias: Vec<f32> = (0..32).map(|i| i as f32 * 0.1).collect();
    let input: Vec<f32> = (0..h * w * 16)
        .map(|i| ((i * 5 % 11) as f32 - 5.0) / 5.0)
        .collect();
    let x = Blocked::from_nhwc(h, w, 16, &input)?;
    for arch in small_core::arch::available() {
        let conv = Conv3x3s2::with_arch(arch, &weights, Some(&bias))?;
        let mut y = conv.alloc_output(&x)?;
        conv.forward(&x, &mut y)?;
        let out = y.to_nhwc();
        println!("{arch:?} {:?}", &out[..4]);
        let dw = Dw::with_arch(arch, &vec![0.5; 9 * 32], None)?;
        let mut z = dw.alloc_output(&y)?;
        dw.forward(&y, &mut z)?;
        let p = Pool::with_arch(arch)?;
        let mut q = p.alloc_output(&z)?;
        p.forward(&z, &mut q)?;
        println!("{arch:?} {:?} {:?}", &z.to_nhwc()[..4], &q.to_nhwc()[..4]);
    }
    println!("{}", Conv3x3s2::explain());
    Ok(())
}
