//! MobileNetV1 at width 1.0 on the VWW input (96x96x3, 2 classes): the
//! network of [`super::vww`] with 4x the channels. No trained file exists
//! for it; it runs with generated weights, as a large workload for benches.

super::vww::mobilenet_v1!(
    /// MobileNetV1 at width 1.0. Output: 2 logits (no person, person).
    Vww1,
    channels: [32, 64, 128, 256, 512, 1024]
);
