//! Small networks that together run every kind of generated kernel on
//! edge shapes, for an arch that has no test harness: the Cortex-M4
//! firmware's `sweep` image runs them and `tests/firmware.rs` checks every
//! output element against the reference layers. Widths that are not a
//! multiple of any tile, channels that are not a multiple of the 16-lane
//! block (a partial block alone, and after a full one), SAME and VALID
//! padding, strides 1, 2 and (2, 1), 1x1, 3x3, 5x5 and full-size filters,
//! group convolution, depthwise, max and average pooling, ReLU and ReLU6,
//! and a residual written in place.

use small_core::{layer, model};

#[layer(fh = 3, fw = 3, fc = 5, k = 20, padding = same, activation = relu)]
pub struct Conv5To20;
#[layer(fh = 3, fw = 3, fc = 20, k = 20, stride = 2, padding = valid)]
pub struct ConvValidS2;
#[layer(fh = 5, fw = 5, fc = 20, k = 7, stride = (2, 1), padding = same, activation = relu6)]
pub struct Conv5x5;

model! {
    /// Dense convolutions.
    pub struct SweepConv {
        input x: [7, 9, 5];
        a: Conv5To20 @ 0 (x) -> t1;
        b: ConvValidS2 @ 1 (t1) -> t2;
        c: Conv5x5 @ 2 (t2) -> t3;
    }
}

#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, stride = 2, padding = same, activation = relu6)]
pub struct DwS2;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, padding = same)]
pub struct DwS1;
#[layer(fh = 3, fw = 3, fc = 1, k = 1, g = 20, stride = 2, padding = same, reduction = max)]
pub struct MaxS2;
#[layer(fh = 2, fw = 2, fc = 1, k = 1, g = 20, padding = valid, reduction = avg)]
pub struct Avg2x2;

model! {
    /// Channelwise kernels: depthwise and pooling.
    pub struct SweepChannelwise {
        input x: [9, 11, 20];
        a: DwS2 @ 0 (x) -> t1;
        b: DwS1 @ 1 (t1) -> t2;
        c: MaxS2 @ 2 (t2) -> t3;
        d: Avg2x2 @ 3 (t3) -> t4;
    }
}

#[layer(fh = 1, fw = 1, fc = 17, k = 33, activation = relu)]
pub struct Pw17To33;
#[layer(fh = 3, fw = 3, fc = 33, k = 33, padding = same, activation = relu, residual)]
pub struct Res33;

model! {
    /// Pointwise (run as one row) and a residual convolution in place.
    pub struct SweepResidual {
        input x: [6, 7, 17];
        a: Pw17To33 @ 0 (x) -> t1;
        b: Res33 @ 1 => 2 (t1, + t1) -> t2;
    }
}

#[layer(fh = 3, fw = 3, fc = 4, k = 4, g = 4, padding = same)]
pub struct Group4;
#[layer(fh = 5, fw = 3, fc = 16, k = 10, padding = valid, activation = relu)]
pub struct FullFilter;
#[layer(fh = 1, fw = 1, fc = 10, k = 3)]
pub struct Fc10To3;

model! {
    /// Group convolution, a filter as large as its input, and a fully
    /// connected layer (the narrow kernel).
    pub struct SweepGroupFc {
        input x: [5, 3, 16];
        a: Group4 @ 0 (x) -> t1;
        b: FullFilter @ 1 (t1) -> t2;
        c: Fc10To3 @ 2 (t2) -> t3;
    }
}
