//! Int8 element-wise operators: `ADD`, and `QUANTIZE` / `DEQUANTIZE`
//! at a model's edges.

use super::{AddRescale, Quant, check_range, check_zero_point, clamp};
use crate::{Activation, Error, check_len};
use small_ir::quant::{activation_range, round_f32};

/// The parameters of an int8 [`add`]: TFLite's `add.cc` `Prepare` for
/// int8 (general rescaling, `left_shift` 20).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AddParams {
    /// Zero point of the first input, `-128..=127`.
    pub input1_zero_point: i32,
    /// Zero point of the second input, `-128..=127`.
    pub input2_zero_point: i32,
    /// Zero point of the output, `-128..=127`.
    pub output_zero_point: i32,
    /// The multipliers of the three scales.
    pub rescale: AddRescale,
    /// Smallest output ([`activation_range`]).
    pub min: i8,
    /// Largest output.
    pub max: i8,
}

impl AddParams {
    /// The parameters TFLite computes for inputs quantized as `input1`
    /// and `input2`, an output quantized as `output`, and the fused
    /// activation `act`.
    pub const fn new(input1: Quant, input2: Quant, output: Quant, act: Activation) -> Self {
        let (min, max) = activation_range(act, output);
        AddParams {
            input1_zero_point: input1.zero_point,
            input2_zero_point: input2.zero_point,
            output_zero_point: output.zero_point,
            rescale: AddRescale::new(input1.scale, input2.scale, output.scale),
            min,
            max,
        }
    }
}

/// TFLite int8 `ADD` without broadcasting (`reference_integer_ops::Add`):
/// `out[i] = clamp(p.rescale.apply(a[i] - zp1, b[i] - zp2) + zp_out, min,
/// max)` ([`AddRescale::apply`]).
///
/// Errors: a zero point outside `-128..=127` or `p.min > p.max` →
/// [`Error::Unsupported`]; `b` or `out` not as long as `a` →
/// [`Error::BufferLength`] (`"b"`, `"output"`, expected `a.len()`).
pub fn add(a: &[i8], b: &[i8], p: &AddParams, out: &mut [i8]) -> Result<(), Error> {
    check_zero_point("input 1 zero point", p.input1_zero_point)?;
    check_zero_point("input 2 zero point", p.input2_zero_point)?;
    check_zero_point("output zero point", p.output_zero_point)?;
    check_range(p.min, p.max)?;
    check_len("b", a.len(), b.len())?;
    check_len("output", a.len(), out.len())?;
    for ((y, &x1), &x2) in out.iter_mut().zip(a).zip(b) {
        let sum = p.rescale.apply(
            i32::from(x1) - p.input1_zero_point,
            i32::from(x2) - p.input2_zero_point,
        );
        *y = clamp(sum.wrapping_add(p.output_zero_point), p.min, p.max);
    }
    Ok(())
}

/// TFLite `QUANTIZE` from `f32` to int8 (`reference_ops::AffineQuantize`):
/// `out[i] = clamp(round(input[i] / q.scale) + q.zero_point, -128, 127)`,
/// the division in `f32` and the rounding half away from zero. A NaN gives
/// the zero point (Rust's saturating `as`; TFLite's cast is undefined).
///
/// Errors: a zero point outside `-128..=127` → [`Error::Unsupported`];
/// `out` not as long as `input` → [`Error::BufferLength`] (`"output"`).
pub fn quantize(input: &[f32], q: Quant, out: &mut [i8]) -> Result<(), Error> {
    check_zero_point("zero point", q.zero_point)?;
    check_len("output", input.len(), out.len())?;
    for (y, &x) in out.iter_mut().zip(input) {
        let v = round_f32(x / q.scale).saturating_add(i64::from(q.zero_point));
        *y = v.clamp(-128, 127) as i8;
    }
    Ok(())
}

/// TFLite `DEQUANTIZE` from int8 to `f32` (`reference_ops::Dequantize`):
/// `out[i] = (f64::from(q.scale) * (input[i] - q.zero_point)) as f32`, in
/// `f64` as TFLite.
///
/// Errors: a zero point outside `-128..=127` → [`Error::Unsupported`];
/// `out` not as long as `input` → [`Error::BufferLength`] (`"output"`).
pub fn dequantize(input: &[i8], q: Quant, out: &mut [f32]) -> Result<(), Error> {
    check_zero_point("zero point", q.zero_point)?;
    check_len("output", input.len(), out.len())?;
    let scale = f64::from(q.scale);
    for (y, &x) in out.iter_mut().zip(input) {
        *y = (scale * f64::from(i32::from(x) - q.zero_point)) as f32;
    }
    Ok(())
}
