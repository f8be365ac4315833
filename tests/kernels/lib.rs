//! The kernel suites (`kernels.rs`, `kernels_i8.rs`, `chain.rs`): every
//! generated kernel against the reference layer of its spec. Their own
//! package, apart from `small-tests`, because they need no network: they
//! build without `small-examples` (every MLPerf Tiny network's kernels,
//! the longest crate of the workspace), so `cargo test -p
//! small-kernel-tests` checks the kernels without building the networks.
//! (In the full test command it saved no time: `small-examples`'s
//! compile already kept both cores busy.)
//!
//! The library holds the helpers every integration test shares: a seeded
//! generator, the reference oracle for a generated layer's spec, and the
//! tolerance derived from the reduction length.

pub use small_core::reference::{first_mismatch, layer as reference_forward, tolerances};

/// Small seeded generator (PCG-style LCG): reproducible, no dependency.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// Next 32 random bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + self.next_u32() as usize % (hi - lo + 1)
    }
    /// Uniform in `[-1, 1)`.
    pub fn unit(&mut self) -> f32 {
        self.next_u32() as f32 / (1u64 << 31) as f32 - 1.0
    }
    /// `n` values uniform in `[-1, 1)`.
    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.unit()).collect()
    }
}

/// A buffer for a layer over its own input (`forward_in_buffer`, as
/// `model!` runs it without `std`): `x` at `shift`
/// (`small_core::plan::in_place_shift`) with the output at 0, overlapping
/// it, or, where the layer cannot run so (`None`), the output of
/// `y_len` elements past the input; `fill` everywhere else. Returns the
/// buffer and the input's and output's offsets.
pub fn in_buffer<E: Copy>(
    x: &[E],
    shift: Option<usize>,
    y_len: usize,
    fill: E,
) -> (Vec<E>, usize, usize) {
    let (x_at, y_at) = match shift {
        Some(s) => (s, 0),
        None => (0, x.len()),
    };
    let mut buf = vec![fill; (x_at + x.len()).max(y_at + y_len)];
    buf[x_at..x_at + x.len()].copy_from_slice(x);
    (buf, x_at, y_at)
}
