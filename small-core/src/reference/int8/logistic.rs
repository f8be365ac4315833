//! Int8 `LOGISTIC`: LiteRT's reference kernel for int8 evaluates a
//! 256-entry table that its `Prepare` fills in `f32` (`PopulateLookupTable`
//! with `1 / (1 + exp(-x))`); the output is quantized with scale 1/256 and
//! zero point -128, which TFLite requires. Checked against LiteRT 2.3 on
//! every int8 input value (`tests/data/tflite/logistic_head_int8`).

use crate::Error;
use crate::reference::math;
use small_ir::quant::{Quant, round_f32};

/// The 256 outputs of an int8 [`logistic`], indexed by `input as u8`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogisticTable([i8; 256]);

impl LogisticTable {
    /// The table for an input quantized as `input` and an output as
    /// `output`: for each `q`, `x = scale * (q - zero_point)`, then
    /// `round(1 / (1 + exp(-x)) * (1 / out_scale)) + out_zero_point`,
    /// clamped, all in `f32` as TFLite computes it.
    ///
    /// Errors: an output other than scale 1/256 and zero point -128 (TFLite
    /// refuses it) → [`Error::Unsupported`].
    ///
    /// ```
    /// use small_core::reference::int8::{LogisticTable, Quant, logistic};
    /// let out = Quant { scale: 1.0 / 256.0, zero_point: -128 };
    /// let table = LogisticTable::new(Quant { scale: 0.1, zero_point: 0 }, out)?;
    /// let mut y = [0i8; 3];
    /// logistic(&[0, 127, -128], &table, &mut y)?;
    /// assert_eq!(y, [0, 127, -128]); // 0.5, ~1 (saturated), ~0
    /// # Ok::<(), small_core::Error>(())
    /// ```
    pub fn new(input: Quant, output: Quant) -> Result<Self, Error> {
        if output.scale != 1.0 / 256.0 || output.zero_point != -128 {
            return Err(Error::Unsupported {
                what: "int8 LOGISTIC output quantization",
                detail: "must be scale 1/256, zero point -128 (as TFLite requires)",
            });
        }
        let inverse_scale = 1.0 / output.scale;
        let mut table = [0i8; 256];
        for q in i8::MIN..=i8::MAX {
            let x = input.scale * (q as i32 - input.zero_point) as f32;
            let y = 1.0 / (1.0 + math::exp(-x));
            // std::round, then the zero point added in f32 and truncated.
            let rescaled = round_f32(y * inverse_scale) as f32;
            let v = (rescaled + output.zero_point as f32) as i32;
            table[q as u8 as usize] = v.clamp(i8::MIN as i32, i8::MAX as i32) as i8;
        }
        Ok(LogisticTable(table))
    }

    /// The output for `q`.
    pub fn get(&self, q: i8) -> i8 {
        self.0[q as u8 as usize]
    }
}

/// Int8 `LOGISTIC` of every element of `input` into `out` through `table`.
///
/// Errors: `out` not as long as `input` → [`Error::BufferLength`].
pub fn logistic(input: &[i8], table: &LogisticTable, out: &mut [i8]) -> Result<(), Error> {
    crate::check_len("logistic output", input.len(), out.len())?;
    for (y, &x) in out.iter_mut().zip(input) {
        *y = table.get(x);
    }
    Ok(())
}
