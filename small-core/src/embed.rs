//! Weights packed at build time, embedded in the binary (flash on a
//! microcontroller): [`packed_weights!`](crate::packed_weights) turns the
//! file a build script wrote with `small_core::build::pack_tflite` (feature
//! `build`) into a `[f32; N]` constant, checked at compile time.

/// `N` little-endian `f32`s from `B = 4 N` bytes, in a `const`: the
/// decoding [`packed_weights!`](crate::packed_weights) does at compile time.
/// A length other than `4 N` fails to compile where it is evaluated.
///
/// ```
/// const W: [f32; 2] = small_core::embed::f32s_from_le::<2, 8>(&[0, 0, 128, 63, 0, 0, 0, 192]);
/// assert_eq!(W, [1.0, -2.0]);
/// ```
pub const fn f32s_from_le<const N: usize, const B: usize>(bytes: &[u8; B]) -> [f32; N] {
    assert!(
        B == 4 * N,
        "packed weights: the file is not 4 bytes per f32 of the program"
    );
    let mut out = [0.0f32; N];
    let mut i = 0;
    while i < N {
        let at = 4 * i;
        out[i] = f32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        i += 1;
    }
    out
}

/// The packed weights of program `$net` for arch `$arch` (an
/// [`Arch`](crate::Arch) variant), which the build script wrote from
/// `$file` with `small_core::build::pack_tflite($file, Arch::$arch)`: a
/// `[f32; $net::packed_len(Arch::$arch)]`, for a `static` that
/// `$net::from_packed` borrows (an int8 program's words hold its layers'
/// rows and tiles: [`crate::words`]). A file of another length (another
/// program or arch) is a compile error.
///
/// ```ignore
/// small_core::tflite_model!(pub Net = "model.tflite");
/// static WEIGHTS: [f32; Net::packed_len(small_core::Arch::CortexM4)] =
///     small_core::packed_weights!(Net, CortexM4, "model.tflite");
/// ```
#[macro_export]
macro_rules! packed_weights {
    ($net:ty, $arch:ident, $file:literal) => {{
        const LEN: usize = <$net>::packed_len($crate::Arch::$arch);
        #[allow(long_running_const_eval)]
        const WEIGHTS: [f32; LEN] =
            $crate::embed::f32s_from_le::<LEN, { LEN * 4 }>(include_bytes!(concat!(
                env!("OUT_DIR"),
                "/",
                $file,
                ".",
                stringify!($arch),
                ".packed"
            )));
        WEIGHTS
    }};
}
