small_core::tflite_model!(Net = "rejected/two_inputs.tflite");

fn main() {}
