//! What the blocking model and the emitter know of an arch: plain numbers
//! (registers, lanes, FMA latency and rate, load ports), and the `cfg` and
//! target features under which its code compiles. Each arch-def file
//! holds one [`Machine`]; the arch-def crate's list names it.

use crate::{KernelKind, LayerSpec};

/// The numbers of one arch, and where its code may compile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Machine {
    /// `cfg` under which the arch's code compiles: every `(key, value)`
    /// pair must hold, as in `#[cfg(all(key = "value", ...))]`; empty for
    /// an arch that compiles everywhere. E.g.
    /// `&[("target_arch", "x86_64")]`.
    pub cfg: &'static [(&'static str, &'static str)],
    /// Target features the kernels are compiled with
    /// (`#[target_feature(enable = ...)]`); empty for none.
    pub target_features: &'static [&'static str],
    /// Number of architectural vector (or FP) registers.
    pub vector_regs: usize,
    /// `f32` lanes per vector register.
    pub lanes: usize,
    /// Latency of one FMA, in cycles.
    pub fma_latency: usize,
    /// FMAs that can issue per cycle (number of FMA pipes).
    pub fma_per_cycle: usize,
    /// Cycles a broadcast kernel's FMA waits, beyond its accumulator's
    /// latency, for the operands it loads (a broadcast and a weight
    /// vector per step): a broadcast tile keeps `fma_per_cycle x
    /// (fma_latency + operand_latency)` independent accumulators
    /// ([`crate::blocking::accumulators_to_hide`]). Measured, per arch:
    /// the tile sizes that keep the pipes busy.
    pub operand_latency: usize,
    /// The same for a column-streamed broadcast kernel (`f32`), whose FMAs
    /// take register operands only: the filter row is loaded once per
    /// row and each broadcast column feeds up to `F_W` FMAs. Where the
    /// register file cannot hold a column tile of `fma_per_cycle x
    /// (fma_latency + operand_latency)` accumulators (AVX2's 16), 0 lets
    /// the column tile that hides the FMA latency alone compete
    /// (measured: AVX2 4 x 16 columns, 8 accumulators, against 6 x 16 per
    /// tap on the networks' 8- to 32-pixel rows, AMD EPYC Zen 3); else
    /// `operand_latency`. `i8` kernels keep `operand_latency`.
    pub column_operand_latency: usize,
    /// The same for a broadcast tile of a pointwise layer (1x1, stride 1),
    /// which runs as one row of `H x W` pixels
    /// ([`crate::geometry::run_rows`]): a wider tile wastes little of such
    /// a row at its end, where on the 8- to 32-pixel rows of 3x3 layers
    /// it wastes a partial tile per row. `operand_latency` where not
    /// measured.
    pub flat_operand_latency: usize,
    /// Cycles one `f32` fused multiply-add (`Simd::fma`) holds the issue
    /// slot: 1 where FMAs pipeline; Cortex-M4 3 (VFMA.F32, TRM table 7-1).
    pub fma_cycles: usize,
    /// Cycles a multiply and a separate add (`Simd::mul`, then
    /// `Simd::add`) hold it: 2 where both pipeline; Cortex-M4 2 (VMUL.F32
    /// 1 + VADD.F32 1). Below `fma_cycles`, `f32` kernels multiply and add
    /// unfused ([`Machine::fuses`]).
    pub mul_add_cycles: usize,
    /// Vector loads (or load-broadcasts) per cycle from L1.
    pub loads_per_cycle: usize,
    /// FMAs and loads together that can issue per cycle. A core with
    /// separate load and FMA ports has `fma_per_cycle + loads_per_cycle`
    /// (the issue width never binds); a single-issue core (Cortex-M) has 1,
    /// so every load takes an FMA's slot.
    pub issue_per_cycle: usize,
    /// True if an FMA can take a broadcast scalar straight from memory
    /// (AVX-512 `{1toN}`), so the broadcast needs no register of its own.
    pub broadcast_from_memory: bool,
    /// Consecutive `i8` input channels the arch's integer dot product sums
    /// into one `i32` lane per step (`arch_defs::Dot::DOT`: AVX-512 VNNI
    /// 4, AVX2's `vpmaddubsw` 4, scalar 1). `i8` weights are packed in
    /// groups of it.
    pub int8_dot: usize,
    /// The same for a thin layer, one of fewer input channels per group
    /// than `int8_dot` (`arch_defs::Dot::THIN_DOT`: AVX2's `vpmaddwd`
    /// pairs 2; `int8_dot` where the arch has one form). See
    /// [`Machine::int8_dot_for`].
    pub int8_thin_dot: usize,
    /// What the dot product adds to every activation (`Dot::X_OFFSET`:
    /// 128 where it multiplies unsigned bytes), compensated at pack time.
    pub int8_x_offset: i32,
    /// The smallest weight the `int8_dot` form multiplies exactly
    /// (`arch_defs::Dot::WEIGHT_MIN`): -128, or -127 on AVX2, whose
    /// `vpsignb` cannot negate -128. TFLite's int8 weights are in
    /// -127..=127; the packer refuses a smaller one with
    /// `Error::WeightRange`. The thin form takes every weight.
    pub int8_weight_min: i8,
    /// Registers an `i8` kernel's accumulators and operands may use: the
    /// vector registers where `i8` lives in them, the general-purpose
    /// registers left beside the kernel's pointers and counters where it
    /// lives in those (Cortex-M4).
    pub int8_regs: usize,
    /// Registers one `Dot::X` or `Dot::W` occupies: 1, or 2 where the
    /// arch widens four bytes into two registers of `i16` pairs
    /// (Cortex-M4's `SXTB16`).
    pub int8_operand_regs: usize,
    /// Cycles before a `Dot::dot`'s result can feed the next one into the
    /// same accumulator: the latency an `i8` broadcast kernel hides.
    pub int8_latency: usize,
    /// The same for a multiply-add of `Dot::Mac` (where an `i8` depthwise
    /// layer sums: AVX2's `f32` FMA, the Cortex-M4's `MLA`): the latency an
    /// `i8` channelwise kernel hides.
    pub int8_mac_latency: usize,
    /// Issue slots of fetching one `i8` operand (`Dot::group`,
    /// `Dot::weights`) per slot of one `Dot::dot`, on an issue-bound core:
    /// 1 where both are one instruction; Cortex-M4 2 (`LDR` and two
    /// `SXTB16`, about 4 cycles, against two 1-cycle `SMLAD`s).
    pub int8_load_cost: usize,
    /// Slots of the FMA pipes one full-width `Dot::dot` step takes, for
    /// the cost model (`cost::estimate`): an `i8` broadcast layer does
    /// `int8_dot` products per lane in that many FMAs' time. AVX-512
    /// VNNI's `vpdpbusd` 1; AVX2's `vpmaddubsw` and `vpmaddwd` 2; NEON's
    /// two `smull`, the Cortex-M4's two `SMLAD` 2; scalar 1. The thin
    /// form (`int8_thin_dot`) counts as 1.
    pub int8_dot_slots: usize,
    /// Where this arch compiles it always runs (its `available()` is a
    /// compile-time fact, as on a microcontroller), so the portable
    /// `reference` kernels are left out of the program there: generated
    /// layers do not dispatch to them and `reference` reports itself
    /// unavailable. Cortex-M4: true (its images carry no fallback).
    pub excludes_reference: bool,
}

impl Machine {
    /// True if `f32` kernels multiply-add with one fused `Simd::fma`;
    /// false if a multiply and an add cost fewer cycles
    /// (`mul_add_cycles < fma_cycles`: the Cortex-M4), so COMPUTE emits
    /// `add(acc, mul(a, b))`. The unfused form rounds twice per step,
    /// within the error bound the kernel tests derive from the reduction
    /// length.
    pub const fn fuses(&self) -> bool {
        self.fma_cycles <= self.mul_add_cycles
    }

    /// True if the issue width binds before the FMA and load ports do
    /// (a single-issue core).
    pub const fn issue_bound(&self) -> bool {
        self.issue_per_cycle < self.fma_per_cycle + self.loads_per_cycle
    }

    /// The dot width of `spec`'s `i8` broadcast kernel: `int8_thin_dot`
    /// for a layer of fewer input channels per group than `int8_dot`, else
    /// `int8_dot`. Its weights are packed in groups of it.
    ///
    /// ```
    /// use small_ir::LayerSpec;
    /// let m = small_ir::Machine { int8_dot: 4, int8_thin_dot: 2, ..REFERENCE };
    /// # const REFERENCE: small_ir::Machine = small_ir::Machine {
    /// #     cfg: &[], target_features: &[], vector_regs: 1, lanes: 1, fma_latency: 1,
    /// #     fma_per_cycle: 1, operand_latency: 1, column_operand_latency: 1,
    /// #     flat_operand_latency: 1,
    /// #     fma_cycles: 1, mul_add_cycles: 2,
    /// #     loads_per_cycle: 1, issue_per_cycle: 2, broadcast_from_memory: false,
    /// #     int8_dot: 1, int8_thin_dot: 1, int8_x_offset: 0, int8_weight_min: -128,
    /// #     int8_regs: 1, int8_operand_regs: 1, int8_latency: 1, int8_mac_latency: 1,
    /// #     int8_load_cost: 1, int8_dot_slots: 1, excludes_reference: false,
    /// # };
    /// // fh, fw, fc (input channels per group), k, g
    /// let stem = LayerSpec::new(3, 3, 3, 8, 1);
    /// let conv = LayerSpec::new(3, 3, 16, 16, 1);
    /// assert_eq!((m.int8_dot_for(&stem), m.int8_dot_for(&conv)), (2, 4));
    /// ```
    pub const fn int8_dot_for(&self, spec: &LayerSpec) -> usize {
        if spec.fc < self.int8_dot {
            self.int8_thin_dot
        } else {
            self.int8_dot
        }
    }

    /// The smallest weight `spec`'s `i8` kernel multiplies exactly:
    /// `int8_weight_min` for a broadcast kernel in the `int8_dot` form,
    /// else -128 (the thin form, and depthwise kernels, which widen).
    pub const fn int8_weight_min_for(&self, spec: &LayerSpec) -> i8 {
        let broadcast = matches!(spec.kind(), KernelKind::Broadcast);
        if broadcast && self.int8_dot_for(spec) == self.int8_dot {
            self.int8_weight_min
        } else {
            i8::MIN
        }
    }
}
