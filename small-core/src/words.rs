//! The words of a network packed ahead of time. A packed buffer is one
//! `[f32]` for every network, so that a build script writes it and a
//! firmware embeds it the same way whatever the element type: an `f32`
//! layer's words are its weights; an `i8` layer's hold its per-channel
//! rows (`i32`, one per word) and then its weight tiles (`i8`, four per
//! word), read in place through the views here. No value ever passes
//! through a float register: a word is written and read as the type it
//! holds.

/// `w` as the `i32`s its words hold.
pub fn as_i32(w: &[f32]) -> &[i32] {
    // SAFETY: `f32` and `i32` have the same size and alignment, every bit
    // pattern is a valid `i32`, and the view borrows `w` for its lifetime.
    unsafe { core::slice::from_raw_parts(w.as_ptr().cast::<i32>(), w.len()) }
}

/// `w` as the `i32`s its words hold, to write.
pub fn as_i32_mut(w: &mut [f32]) -> &mut [i32] {
    // SAFETY: as `as_i32`; every `i32` written is a valid `f32` bit
    // pattern too, and the view borrows `w` mutably for its lifetime.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<i32>(), w.len()) }
}

/// `w` as the `i8`s its words hold, four per word in memory order.
pub fn as_i8(w: &[f32]) -> &[i8] {
    // SAFETY: `i8` has alignment 1 and every bit pattern is valid; the
    // `4 * len` bytes are `w`'s own (`len <= isize::MAX / 4` as a slice's
    // size in bytes), borrowed for its lifetime.
    unsafe { core::slice::from_raw_parts(w.as_ptr().cast::<i8>(), 4 * w.len()) }
}

/// `w` as the `i8`s its words hold, to write.
pub fn as_i8_mut(w: &mut [f32]) -> &mut [i8] {
    // SAFETY: as `as_i8`, borrowed mutably; any bytes make valid `f32`s.
    unsafe { core::slice::from_raw_parts_mut(w.as_mut_ptr().cast::<i8>(), 4 * w.len()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_write_and_read_the_same_bytes() {
        let mut w = [0.0f32; 3];
        as_i32_mut(&mut w)[0] = -2;
        as_i8_mut(&mut w[1..]).copy_from_slice(&[1, -1, 2, -2, 3, -3, 4, -4]);
        assert_eq!(as_i32(&w)[0], -2);
        assert_eq!(as_i8(&w[1..]), &[1, -1, 2, -2, 3, -3, 4, -4]);
        assert_eq!(w[0].to_bits(), (-2i32) as u32);
    }
}
