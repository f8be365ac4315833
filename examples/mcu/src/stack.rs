//! Stack high-water mark by painting: before the inference, the free stack
//! below the current stack pointer is filled with a pattern; afterwards
//! the lowest word that lost it is as deep as the stack went.

use core::ptr;

/// The pattern.
const PAINT: u32 = 0xC0FF_EE55;
/// Painted at most this far below the stack pointer.
const WINDOW: usize = 256 * 1024;
/// Left alone just below the stack pointer (`paint`'s own calls).
const MARGIN: usize = 256;

unsafe extern "C" {
    /// End of `.bss` (cortex-m-rt's `link.x`): the stack may grow down to here.
    static __sheap: u32;
    /// Initial stack pointer: the top of RAM.
    static _stack_start: u32;
}

/// Paints the free stack; returns the lowest painted address.
#[inline(never)]
pub fn paint() -> usize {
    let sp = cortex_m::register::msp::read() as usize - MARGIN;
    let lo = (&raw const __sheap as usize).max(sp.saturating_sub(WINDOW)) & !3;
    let mut p = lo;
    while p < sp {
        // SAFETY: [lo, sp - MARGIN) lies between the end of `.bss` and the
        // stack pointer: RAM the linker reserves for the stack (there is no
        // heap) that no live frame uses, and no interrupt is enabled.
        unsafe { ptr::write_volatile(p as *mut u32, PAINT) };
        p += 4;
    }
    lo
}

/// Bytes of stack used since [`paint`] (from the top of RAM down to the
/// deepest word written), given `paint`'s return value.
pub fn used(lo: usize) -> usize {
    let top = &raw const _stack_start as usize;
    let mut p = lo;
    // SAFETY: [lo, top) is the stack region, plain RAM; reading it races
    // with nothing (single core, no interrupts).
    while p < top && unsafe { ptr::read_volatile(p as *const u32) } == PAINT {
        p += 4;
    }
    top - p
}
