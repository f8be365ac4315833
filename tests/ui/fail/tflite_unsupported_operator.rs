small_core::tflite_model!(Net = "rejected/concat.tflite");

fn main() {}
