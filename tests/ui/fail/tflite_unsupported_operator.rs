small_core::tflite_model!(Net = "rejected/mul.tflite");

fn main() {}
