use small_core::{Arch, Blocked, Dims, Filter, layer};
use small_core::ir::quant::Rescale;
use small_core::reference::int8::Requant;

#[layer(fh = 3, fw = 3, fc = 8, k = 8, padding = same, dtype = i8, archs(reference))]
pub struct Conv;

#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 8, stride = 2, reduction = max, dtype = i8, archs(reference))]
pub struct Pool;

fn main() -> Result<(), small_core::Error> {
    let q = Requant {
        input_zero_point: -128,
        rescale: &[Rescale::Real(0.01)],
        output_zero_point: 3,
        min: -128,
        max: 127,
    };
    let conv = Conv::with_arch(Arch::Reference, Filter::ohwi(&[1; Conv::WEIGHTS_LEN]), None, &q)?;
    let pool = Pool::with_arch(Arch::Reference, -128, 127)?;
    let x: Blocked<Vec<i8>, i8> = Blocked::zeros(Dims { c: 8, h: 4, w: 4 })?;
    let mut y = conv.alloc_output(&x)?;
    conv.forward(&x, &mut y)?;
    let mut z = pool.alloc_output(&y)?;
    pool.forward(&y, &mut z)?;
    Ok(())
}
