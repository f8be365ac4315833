//! VWW 0.25 int8 from its `.tflite` file: one macro line declares the
//! program (layers specialized for every arch, arena planned at compile
//! time, the file embedded); `main` loads the weights, fills the input
//! and runs it.
//! Usage: `tflite-app [IMAGE]`, IMAGE raw int8 NHWC 96x96x3 (default: a
//! mid-gray image); prints the two logits and the class.

small_core::tflite_model!(Vww = "../../../shared/models/vww_96_int8.tflite");

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The weights, from the copy of the file the program embeds.
    let file = small_core::load::tflite::Model::parse(Vww::FILE)?;
    let net = Vww::load(&file, small_core::arch::selected()?)?; // checks the graph too
    let image: Vec<i8> = match std::env::args().nth(1) {
        Some(path) => std::fs::read(path)?.into_iter().map(|b| b as i8).collect(),
        None => vec![0; 96 * 96 * 3],
    };
    // On a cache line: a `vec!` works too, slower where it lands off one.
    let mut arena = small_core::Aligned::filled(Vww::ARENA, 0i8)?;
    Vww::input(&mut arena)?.fill_from_nhwc(&image)?;
    net.forward(&mut arena)?;
    // The logits: the file's SOFTMAX is the caller's (it keeps the order).
    let logits = Vww::output(&arena)?.to_nhwc();
    let class = if logits[1] > logits[0] {
        "person"
    } else {
        "no person"
    };
    println!("logits {logits:?}: {class}");
    Ok(())
}
