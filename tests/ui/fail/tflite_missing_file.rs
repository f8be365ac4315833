small_core::tflite_model!(Net = "no-such-model.tflite");

fn main() {}
