//! Owned buffers that start on a cache line ([`Aligned`]).
//!
//! A kernel loads a whole vector (16 `f32` with AVX-512: 64 bytes) of
//! weights or of a pixel at a time. Where the buffer starts 16 bytes into
//! a cache line, as `malloc` may place a `Vec`, every such load spans two
//! lines and costs two. Measured on an Intel Xeon VM (Ice Lake, AVX-512,
//! 2026-11-29, one thread): DS-CNN's 64->64 pointwise layers took 8.9-9.0
//! µs on weights 16 bytes off a line and 6.6-6.9 µs on aligned ones; its
//! depthwise layers 2.2-2.9 µs on a misaligned arena and 1.9 µs on an
//! aligned one.

use alloc::vec::Vec;
use core::fmt;
use core::ops::{Deref, DerefMut};

use crate::Error;

/// The alignment of an [`Aligned`] buffer's first element, in bytes: a
/// cache line, and the widest vector an arch loads (AVX-512).
pub const ALIGN: usize = 64;

/// A heap buffer of `len` values whose first value starts on an [`ALIGN`]
/// byte boundary, whatever the allocator returns: a `Vec` with room for
/// `ALIGN` more bytes, used from its first aligned element. It derefs to
/// the `len` values (`&[T]`, `&mut [T]`), so it goes wherever a slice does.
///
/// Generated layers keep their packed weights in one; a model's arena
/// should be one too ([`Aligned::zeroed`]`(N::ARENA)`): a
/// `vec![0.0; N::ARENA]` works the same, only slower where `malloc`
/// places it off a cache line.
///
/// ```
/// use small_core::Aligned;
/// let mut a = Aligned::filled(100, 1.5f32).unwrap();
/// assert_eq!(a.len(), 100);
/// assert_eq!(a.as_ptr() as usize % small_core::aligned::ALIGN, 0);
/// a[99] = 2.0;
/// assert_eq!(a.iter().sum::<f32>(), 99.0 * 1.5 + 2.0);
/// ```
pub struct Aligned<T> {
    buf: Vec<T>,
    start: usize,
    len: usize,
}

impl<T: Copy> Aligned<T> {
    /// `len` copies of `value`, or [`Error::TooLarge`] if the allocation
    /// fails or its size overflows.
    pub fn filled(len: usize, value: T) -> Result<Self, Error> {
        let size = core::mem::size_of::<T>().max(1);
        let slack = ALIGN.div_ceil(size);
        let n = len.checked_add(slack);
        let too_large = || Error::TooLarge {
            what: "aligned buffer (values x 1 x 1)",
            dims: [len, 1, 1],
            refused: len.checked_mul(size),
        };
        let n = n.ok_or_else(too_large)?;
        let mut buf = Vec::new();
        buf.try_reserve_exact(n).map_err(|_| too_large())?;
        buf.resize(n, value);
        // `align_offset` may decline (usize::MAX); the buffer then starts
        // where the allocator put it, which is only slower.
        let start = match buf.as_ptr().align_offset(ALIGN) {
            s if s < slack => s,
            _ => 0,
        };
        Ok(Aligned { buf, start, len })
    }

    /// `len` default values (zeros for numbers), or [`Error::TooLarge`].
    pub fn zeroed(len: usize) -> Result<Self, Error>
    where
        T: Default,
    {
        Self::filled(len, T::default())
    }

    /// A copy of `values` in a new aligned buffer.
    pub fn from_slice(values: &[T]) -> Result<Self, Error>
    where
        T: Default,
    {
        let mut a = Self::zeroed(values.len())?;
        a.copy_from_slice(values);
        Ok(a)
    }
}

impl<T> Deref for Aligned<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.buf[self.start..self.start + self.len]
    }
}

impl<T> DerefMut for Aligned<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        &mut self.buf[self.start..self.start + self.len]
    }
}

impl<T> AsRef<[T]> for Aligned<T> {
    fn as_ref(&self) -> &[T] {
        self
    }
}

impl<T> AsMut<[T]> for Aligned<T> {
    fn as_mut(&mut self) -> &mut [T] {
        self
    }
}

/// A clone is a new allocation, aligned on its own: the values move to
/// its first aligned element.
impl<T: Copy> Clone for Aligned<T> {
    fn clone(&self) -> Self {
        let mut buf = self.buf.clone();
        let slack = buf.len() - self.len;
        let start = match buf.as_ptr().align_offset(ALIGN) {
            s if s < slack => s,
            _ => 0,
        };
        buf.copy_within(self.start..self.start + self.len, start);
        Aligned {
            buf,
            start,
            len: self.len,
        }
    }
}

impl<T: fmt::Debug> fmt::Debug for Aligned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

impl<T: PartialEq> PartialEq for Aligned<T> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_length_starts_aligned_and_holds_its_values() {
        for len in [0, 1, 3, 15, 16, 17, 1000] {
            let a = Aligned::filled(len, 7i8).unwrap();
            assert_eq!(a.len(), len);
            assert_eq!(a.as_ptr() as usize % ALIGN, 0, "len {len}");
            assert!(a.iter().all(|&v| v == 7));
            let b: Aligned<i32> = Aligned::zeroed(len).unwrap();
            assert_eq!(b.as_ptr() as usize % ALIGN, 0, "len {len}");
            assert!(b.iter().all(|&v| v == 0));
        }
    }

    #[test]
    fn a_clone_is_equal_and_aligned() {
        let a = Aligned::from_slice(&[1.0f32, 2.0, 3.0]).unwrap();
        let b = a.clone();
        assert_eq!(a, b);
        assert_eq!(&*b, &[1.0, 2.0, 3.0]);
        assert_eq!(b.as_ptr() as usize % ALIGN, 0);
    }

    #[test]
    fn an_absurd_length_is_an_error() {
        assert!(matches!(
            Aligned::<f32>::zeroed(usize::MAX),
            Err(Error::TooLarge { .. })
        ));
        assert!(matches!(
            Aligned::<f32>::zeroed(usize::MAX / 8),
            Err(Error::TooLarge { .. })
        ));
    }
}
