// The trybuild project's own Cargo.toml: a file, but not a model.
small_core::tflite_model!(Net = "Cargo.toml");

fn main() {}
