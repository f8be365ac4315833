//! `small-codegen FILE.tflite [--rust [NAME]]`: the operator table of a
//! `.tflite` file as small-rs layers, or with `--rust` the generated
//! source (`#[layer]` structs and the `model!` block, struct `NAME`,
//! default `Net`).

use small_codegen::Program;
use small_tflite::Model;
use std::process::ExitCode;

const USAGE: &str = "usage: small-codegen FILE.tflite [--rust [NAME]]
  prints the operator table of FILE as small-rs layers: each layer's operators,
  shapes, MACs, #[layer] arguments and the tile each arch derives;
  --rust prints the generated source instead (struct NAME, default Net)";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, rust) = match args.as_slice() {
        [path] if !path.starts_with('-') => (path, None),
        [path, flag] if flag == "--rust" => (path, Some("Net")),
        [path, flag, name] if flag == "--rust" => (path, Some(name.as_str())),
        _ => {
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    let program = Model::from_file(path)
        .map_err(|e| e.to_string())
        .and_then(|file| Program::from_file(&file).map_err(|e| e.to_string()));
    match program {
        Ok(p) => {
            match rust {
                Some(name) => print!("{}", p.source(name)),
                None => {
                    let stem = std::path::Path::new(path)
                        .file_stem()
                        .map_or(path.clone(), |s| s.to_string_lossy().into_owned());
                    print!("{}", p.table(&stem));
                }
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("small-codegen: {path}: {e}");
            ExitCode::FAILURE
        }
    }
}
