//! Pixels narrower than a vector. On x86-64 a tensor of at most 4
//! channels stores 4 lanes per pixel (`small_ir::geometry::NARROW`),
//! fewer than an AVX2 (8) or AVX-512 (16) vector. The `_px` primitives
//! ([`Simd::load_px`](crate::Simd::load_px), ...) read and write such a
//! pixel through a scratch vector, so a kernel never touches the next
//! pixel (another tile's, another thread's) nor the memory past the
//! tensor. Where a pixel holds whole vectors (every other tensor, every
//! arch on Arm) they are the plain primitive: the width and the lanes are
//! constants, and the test folds away.

/// Elements of the scratch vector: the most lanes of any arch.
pub(crate) const SCRATCH: usize = 16;

/// The `width` elements at `p`, then zeros.
///
/// # Safety
/// `p` is valid for reads of `min(width, SCRATCH)` elements.
#[inline(always)]
pub(crate) unsafe fn gather<T: Copy + Default>(p: *const T, width: usize) -> [T; SCRATCH] {
    let mut v = [T::default(); SCRATCH];
    // SAFETY: `p` is valid for the elements copied (the caller); `v`, a
    // local, holds `SCRATCH` and never overlaps a tensor.
    unsafe { core::ptr::copy_nonoverlapping(p, v.as_mut_ptr(), width.min(SCRATCH)) };
    v
}

/// Copies the first `width` elements of `v` to `p`.
///
/// # Safety
/// `p` is valid for writes of `min(width, SCRATCH)` elements.
#[inline(always)]
pub(crate) unsafe fn scatter<T: Copy>(v: &[T; SCRATCH], p: *mut T, width: usize) {
    // SAFETY: as in `gather`, writing.
    unsafe { core::ptr::copy_nonoverlapping(v.as_ptr(), p, width.min(SCRATCH)) };
}

/// `write`, which stores a whole vector of at most [`SCRATCH`] elements,
/// into a scratch vector whose first `width` elements are then copied to
/// `p`: a pixel narrower than a vector. Only there: the `_px` primitives
/// call the primitive itself for a pixel of whole vectors, as a closure
/// the compiler leaves out of line (the kernels are large) made an `i8`
/// kernel 25x slower.
///
/// # Safety
/// `p` is valid for writes of `min(width, SCRATCH)` elements, and
/// `write`'s own contract holds for a pointer valid for `SCRATCH`.
#[inline(always)]
pub(crate) unsafe fn write_through<T: Copy + Default>(
    p: *mut T,
    width: usize,
    write: impl FnOnce(*mut T),
) {
    let mut lanes = [T::default(); SCRATCH];
    write(lanes.as_mut_ptr());
    // SAFETY: the pixel holds `width` elements (the caller's guarantee).
    unsafe { scatter(&lanes, p, width) };
}
