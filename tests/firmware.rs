//! The Cortex-M4 firmware (`examples/mcu`) against the host, and its size
//! report.
//!
//! `scripts/test`'s `firmware` stage builds one firmware image per network,
//! runs each under `qemu-system-arm` (mps2-an386) and leaves in
//! `SMALL_FIRMWARE_DIR` its ELF (`<net>.elf`), what it printed
//! (`<net>.out`) and the instructions and estimated cycles of one
//! inference (`<net>.cyc`, from the QEMU plugin `cycle_window`). An int8
//! image (`<net>-int8`) must equal the host's int8 reference and
//! LiteRT's golden output byte for byte, and so must each int8 test graph
//! of the `sweep-int8` image (`firmware::INT8_GRAPHS`). This test then runs the same case
//! (`small_examples::firmware::case`: the same weights and input) on the
//! host's reference layers and requires every output of the firmware to
//! be within the bound propagated through the network
//! (`small_examples::check::bounds`), and, with trained weights, the same
//! class as LiteRT. It writes `report.md` (flash, RAM, stack, instructions
//! against the Arduino Nano 33 BLE) next to the outputs.
//!
//! Without `SMALL_FIRMWARE_DIR` it prints SKIPPED: building the firmware
//! takes Debian's cross toolchain, which the stage provides.

use small_core::ir::geometry::{narrow_of, width_for};
use small_core::model::{reference_run, reference_run_i8};
use small_core::reference::int8;
use small_core::{Blocked, Dims};
use small_examples::check::{Propagation, argmax, bounds, first_mismatch, max_diff};
use small_examples::firmware::{self, Case, Weights};
use small_examples::golden::int8_softmax;
use small_examples::models::{Head, Int8Network, Network, ad, dscnn, resnet8, sweep, vww};
use std::fmt::Write as _;
use std::path::Path;

/// The board MLPerf Tiny's results are for: Arduino Nano 33 BLE (nRF52840).
const NANO_FLASH: usize = 1024 * 1024;
const NANO_RAM: usize = 256 * 1024;
/// RAM starts here in `examples/mcu/memory.x`; flash below it.
const RAM_ORIGIN: u32 = 0x2000_0000;

/// What one firmware image printed and takes.
struct Run {
    name: &'static str,
    int8: bool,
    what: String,
    /// How the output compared with the host.
    max_diff: String,
    summary: String,
    tiles: Vec<String>,
    weights: usize,
    arena: usize,
    stack: usize,
    size: Sizes,
    /// Instructions and the Cortex-M4 cycle estimate of one inference
    /// (the QEMU plugin's window), if counted.
    counts: Option<Counts>,
    /// What TensorFlow Lite Micro takes for the same network on the same
    /// emulator: the anchor of the report.
    tflm: Tflm,
}

impl Run {
    /// RAM the image takes: data, bss (the arena) and the stack's high-water mark.
    fn ram(&self) -> usize {
        self.size.data + self.size.bss + self.stack
    }
    /// True if the image fits the Nano 33 BLE's flash and RAM.
    fn fits_nano(&self) -> bool {
        self.size.flash() <= NANO_FLASH && self.ram() <= NANO_RAM
    }
}

/// Instructions and estimated cycles of one inference.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Counts {
    instructions: u64,
    cycles: u64,
}

/// TensorFlow Lite Micro on the same emulator (issue #23's anchors,
/// `shared/tools/qemu-insn-window`): float32 reference kernels
/// (instructions only), or int8 with CMSIS-NN (instructions, estimated
/// cycles, arena bytes).
#[derive(Debug, Clone, Copy)]
enum Tflm {
    F32 {
        instructions: &'static str,
    },
    Int8 {
        instructions: f64,
        cycles: f64,
        arena: f64,
    },
}

#[test]
fn firmware_matches_host() {
    let Some(dir) = std::env::var_os("SMALL_FIRMWARE_DIR") else {
        println!("SKIPPED: SMALL_FIRMWARE_DIR is not set (scripts/test's firmware stage sets it)");
        return;
    };
    let dir = Path::new(&dir);
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let f32 = |instructions| Tflm::F32 { instructions };
    let cmsis = |instructions, cycles, arena| Tflm::Int8 {
        instructions,
        cycles,
        arena,
    };
    let mut runs = vec![
        image::<dscnn::DsCnn>(dir, &repo, "dscnn", f32("34.5–38.0")),
        image::<ad::Autoencoder>(dir, &repo, "ad", f32("1.36")),
        image::<resnet8::Resnet8>(dir, &repo, "resnet8", f32("85.8–99.9")),
        image::<vww::Vww>(dir, &repo, "vww", f32("78.8–86.3")),
    ];
    // The int8 images need the trained files: the stage builds them only
    // when the models directory has them (it says so when not).
    if dir.join("dscnn-int8.out").exists() || std::env::var_os("CI").is_some() {
        runs.extend([
            image_i8::<dscnn::int8::DsCnn>(dir, &repo, "dscnn-int8", cmsis(7.70, 9.82, 22.8)),
            image_i8::<ad::int8::Autoencoder>(dir, &repo, "ad-int8", cmsis(0.58, 0.74, 2.6)),
            image_i8::<resnet8::int8::Resnet8>(dir, &repo, "resnet8-int8", cmsis(29.9, 40.2, 55.0)),
            image_i8::<vww::int8::Vww>(dir, &repo, "vww-int8", cmsis(24.1, 31.0, 100.7)),
        ]);
    } else {
        println!("note: no int8 images (no MLPerf Tiny models when the stage ran)");
    }
    let ok: Vec<&Run> = runs.iter().filter_map(|r| r.as_ref().ok()).collect();
    let mut report = report(&ok);
    // int8 is what deploys on the board (issue #23): an int8 image that
    // outgrows the Nano 33 BLE fails, where an f32 one is only reported.
    let too_big: Vec<String> = ok
        .iter()
        .filter(|r| r.int8 && !r.fits_nano())
        .map(|r| {
            format!(
                "{} int8 does not fit the Nano 33 BLE: flash {} B (of {NANO_FLASH}), RAM {} B (of {NANO_RAM})",
                r.name,
                r.size.flash(),
                r.ram()
            )
        })
        .collect();
    let sweep = sweep(dir, &repo);
    let sweep_i8 = sweep_i8(dir, &repo);
    for line in [&sweep, &sweep_i8].into_iter().flatten() {
        report.push_str(line);
    }
    println!("{report}");
    std::fs::write(dir.join("report.md"), &report).expect("write report.md");
    let mut failed: Vec<&String> = runs.iter().filter_map(|r| r.as_ref().err()).collect();
    failed.extend(sweep.as_ref().err());
    failed.extend(sweep_i8.as_ref().err());
    failed.extend(&too_big);
    assert!(failed.is_empty(), "firmware failed:\n{failed:#?}");
}

/// The output of image `image` (`<image>.out`), parsed.
fn read_output(dir: &Path, image: &str) -> Result<Vec<Section>, String> {
    let p = dir.join(format!("{image}.out"));
    let bytes =
        std::fs::read(&p).map_err(|e| format!("{image}: cannot read {}: {e}", p.display()))?;
    let text = String::from_utf8_lossy(&bytes);
    parse(&text).map_err(|e| format!("{image}: {e}\n--- {image}.out:\n{text}"))
}

/// The image of one MLPerf Tiny network: its output checked, its size
/// and instruction count read.
fn image<N: Network>(
    dir: &Path,
    repo: &Path,
    image: &'static str,
    tflm: Tflm,
) -> Result<Run, String> {
    let out = read_output(dir, image)?;
    let [net] = &out[..] else {
        return Err(format!(
            "{image}: {} networks in the output, expected 1",
            out.len()
        ));
    };
    let (case, y) = check::<N>(net, repo)?;
    if let (Some(golden), Head::Softmax) = (&case.golden, N::HEAD)
        && argmax(&y.0) != argmax(golden)
    {
        return Err(format!(
            "{image}: firmware class {} but LiteRT's is {}",
            argmax(&y.0),
            argmax(golden)
        ));
    }
    let (size, counts) = measured(dir, image)?;
    Ok(Run {
        name: N::NAME,
        int8: false,
        what: case.what,
        max_diff: format!("max |firmware - host reference| {:.2e}", y.1),
        summary: net.summary.clone().unwrap_or_default(),
        tiles: net.tiles.clone(),
        weights: net.weights,
        arena: net.arena,
        stack: net.stack,
        size,
        counts,
        tflm,
    })
}

/// The image of one int8 MLPerf Tiny network: its output equal, byte for
/// byte, to the host's int8 reference layers and to LiteRT's golden
/// output; its size and counts read.
fn image_i8<N: Int8Network>(
    dir: &Path,
    repo: &Path,
    image: &'static str,
    tflm: Tflm,
) -> Result<Run, String> {
    let out = read_output(dir, image)?;
    let [net] = &out[..] else {
        return Err(format!(
            "{image}: {} networks in the output, expected 1",
            out.len()
        ));
    };
    let case = firmware::case_i8::<N>(repo)?;
    let what = format!("{} int8 on cortex_m4: {}", N::NAME, case.what);
    if net.case != what {
        return Err(format!(
            "{image}: the firmware ran `{}` but the host has `{what}` (rebuild it with the same SMALL_MODELS)",
            net.case
        ));
    }
    let values = reference_run_i8(&*case.model, N::LAYERS, N::DIMS, &case.input)
        .map_err(|e| format!("{image}: reference: {e}"))?;
    let want = &values[N::OUTPUT];
    // LiteRT's output is after the SOFTMAX head the network leaves to its
    // caller: apply LiteRT's int8 SOFTMAX to the firmware's logits.
    let head = int8_softmax(&case.model).map_err(|e| format!("{image}: {e}"))?;
    let probabilities = match &head {
        Some(p) => {
            let mut y = vec![0i8; net.q.len()];
            int8::softmax(&net.q, net.q.len(), p, &mut y)
                .map_err(|e| format!("{image}: softmax: {e}"))?;
            y
        }
        None => net.q.clone(),
    };
    equal_i8(image, "the host's int8 reference", &net.q, want)?;
    equal_i8(
        image,
        "LiteRT's golden output",
        &probabilities,
        &case.golden,
    )?;
    let (size, counts) = measured(dir, image)?;
    Ok(Run {
        name: N::NAME,
        int8: true,
        what: case.what,
        max_diff: format!(
            "{} outputs equal to the host reference and LiteRT",
            want.len()
        ),
        summary: format!("class {}", argmax_i8(&net.q)),
        tiles: net.tiles.clone(),
        weights: net.weights,
        arena: net.arena,
        stack: net.stack,
        size,
        counts,
        tflm,
    })
}

/// The largest value's index.
fn argmax_i8(v: &[i8]) -> usize {
    let mut best = 0;
    for (i, x) in v.iter().enumerate() {
        if *x > v[best] {
            best = i;
        }
    }
    best
}

/// The ELF's sizes and, if the plugin ran, the counts of image `image`.
fn measured(dir: &Path, image: &str) -> Result<(Sizes, Option<Counts>), String> {
    let read = |ext: &str| {
        let p = dir.join(format!("{image}.{ext}"));
        std::fs::read(&p).map_err(|e| format!("{image}: cannot read {}: {e}", p.display()))
    };
    let counts = match read("cyc") {
        Ok(b) => {
            Some(parse_counts(&String::from_utf8_lossy(&b)).map_err(|e| format!("{image}: {e}"))?)
        }
        Err(_) => None,
    };
    let size = Sizes::of_elf(&read("elf")?).map_err(|e| format!("{image}.elf: {e}"))?;
    Ok((size, counts))
}

/// The kernel sweep image: every small network's output checked. Returns
/// the report's line.
fn sweep(dir: &Path, repo: &Path) -> Result<String, String> {
    let out = read_output(dir, "sweep")?;
    let find = |name: &str| {
        out.iter()
            .find(|s| s.name == name)
            .ok_or_else(|| format!("sweep: no output of {name}"))
    };
    let mut layers = 0;
    let mut tiles = Vec::new();
    let mut worst = 0.0f32;
    let mut one = |r: Result<(Case, (Vec<f32>, f32)), String>, s: &Section| -> Result<(), String> {
        let (_, (_, diff)) = r?;
        if s.layers.is_empty() {
            return Err(format!("sweep: {} printed no layer outputs", s.name));
        }
        layers += s.tiles.len();
        worst = worst.max(diff);
        tiles.extend(s.tiles.iter().map(|t| format!("{} {t}", s.name)));
        Ok(())
    };
    let s = find(sweep::SweepConv::NAME)?;
    one(check::<sweep::SweepConv>(s, repo), s)?;
    let s = find(sweep::SweepChannelwise::NAME)?;
    one(check::<sweep::SweepChannelwise>(s, repo), s)?;
    let s = find(sweep::SweepResidual::NAME)?;
    one(check::<sweep::SweepResidual>(s, repo), s)?;
    let s = find(sweep::SweepGroupFc::NAME)?;
    one(check::<sweep::SweepGroupFc>(s, repo), s)?;
    Ok(format!(
        "- kernel sweep (small_examples::models::sweep): {} networks, {layers} layers, every element \
         of every layer's output within its bound (max |firmware - host reference| {worst:.2e}); tiles: {}\n",
        out.len(),
        tiles.join(", ")
    ))
}

/// `Ok` if the int8 output `got` of `what` equals `want` byte for byte,
/// else where they first differ.
fn equal_i8(what: &str, whose: &str, got: &[i8], want: &[i8]) -> Result<(), String> {
    if got == want {
        return Ok(());
    }
    let first = got.iter().zip(want).position(|(a, b)| a != b);
    let at = first.map_or(String::new(), |i| {
        format!(": {} against {}", got[i], want[i])
    });
    Err(format!(
        "{what}: output differs from {whose} ({} against {} values), first difference at {first:?}{at}",
        got.len(),
        want.len()
    ))
}

/// The int8 sweep image: each graph of `firmware::INT8_GRAPHS` on its
/// first saved input, its output equal to the host's int8 reference byte
/// for byte (and, for a graph without a SOFTMAX or LOGISTIC head, to
/// LiteRT's saved output). Returns the report's line.
fn sweep_i8(dir: &Path, repo: &Path) -> Result<String, String> {
    use small_core::load::tflite::Model as File;
    let out = read_output(dir, "sweep-int8")?;
    if out.len() != firmware::INT8_GRAPHS.len() {
        return Err(format!(
            "sweep-int8: {} graphs in the output, expected {}",
            out.len(),
            firmware::INT8_GRAPHS.len()
        ));
    }
    let (mut layers, mut outputs) = (0, 0);
    for (stem, s) in firmware::INT8_GRAPHS.iter().zip(&out) {
        let at = |e: &dyn std::fmt::Display| format!("sweep-int8 {stem}: {e}");
        if s.case != format!("{stem} int8 graph on cortex_m4") {
            return Err(at(&format!("the image ran `{}` here", s.case)));
        }
        let path = repo
            .join("tests/data/tflite")
            .join(format!("{stem}.tflite"));
        let file = File::from_file(&path).map_err(|e| at(&e))?;
        let program = small_codegen::Program::from_file(&file).map_err(|e| at(&e))?;
        let (infos, dims) = small_tests::program_layers(&program);
        let read = |ext: &str| std::fs::read(path.with_extension(ext)).map_err(|e| at(&e));
        let n = program.input.elements();
        let input: Vec<i8> = read("in")?.iter().take(n).map(|&b| b as i8).collect();
        let values = reference_run_i8(&file, &infos, &dims, &input).map_err(|e| at(&e))?;
        let want = values.last().ok_or_else(|| at(&"no output"))?;
        let mut golden = vec![("the host's int8 reference", want.clone())];
        if matches!(program.head, small_codegen::Head::None) {
            let saved = read("out")?
                .iter()
                .take(want.len())
                .map(|&b| b as i8)
                .collect();
            golden.push(("LiteRT's saved output", saved));
        }
        for (whose, w) in golden {
            equal_i8(&format!("sweep-int8 {stem}"), whose, &s.q, &w)?;
        }
        layers += s.tiles.len();
        outputs += s.q.len();
    }
    Ok(format!(
        "- int8 sweep (small_examples::firmware::INT8_GRAPHS): {} graphs of tests/data/tflite, {layers} layers, \
         {outputs} outputs equal to the host's int8 reference byte for byte\n",
        out.len()
    ))
}

/// A blocked tensor as a Cortex-M stores it, in the host's layout: a
/// tensor of fewer than `CB` channels has only `width` lanes per pixel
/// there (`small_ir::geometry::NARROW` on `arm`), here `CB` unless it has
/// at most 4 (`NARROW` on `x86_64`), padded with
/// zeros (`Blocked::from_buffer` then checks the lanes the firmware wrote
/// past the channels are zero, and the length).
fn host_layout(d: Dims, v: &[f32]) -> Vec<f32> {
    let m4 = width_for(d.c, narrow_of("arm"));
    if m4 == d.width() || v.len() != d.h * d.w * m4 {
        return v.to_vec();
    }
    let mut out = vec![0.0; d.h * d.w * d.width()];
    for (to, from) in out.chunks_exact_mut(d.width()).zip(v.chunks_exact(m4)) {
        to[..m4].copy_from_slice(from);
    }
    out
}

/// Checks one network's output against the host: the same case on the
/// reference layers, every element within the bound propagated through the
/// network, and the blocked layout's padding lanes zero. Returns the case,
/// and the output (NHWC) with its largest difference.
fn check<N: Network>(out: &Section, repo: &Path) -> Result<(Case, (Vec<f32>, f32)), String> {
    let name = N::NAME;
    let case = firmware::case::<N>(repo)?;
    let what = format!("{} on cortex_m4: {}", N::NAME, case.what);
    if out.case != what {
        return Err(format!(
            "{name}: the firmware ran `{}` but the host has `{what}` (rebuild it with the same SMALL_MODELS)",
            out.case
        ));
    }
    let nhwc = |id: usize, v: &[f32]| {
        let d = N::DIMS[id];
        Blocked::from_buffer(d, host_layout(d, v))
            .map(|b| b.to_nhwc())
            .map_err(|e| format!("{name}: firmware tensor {id}: {e}"))
    };
    let values = reference_run(&case.weights, N::LAYERS, N::DIMS, &case.input)
        .map_err(|e| format!("{name}: reference: {e}"))?;
    let how = match case.weights {
        Weights::Trained(_) => Propagation::Probable { lambda: 8.0 },
        Weights::Generated(_) => Propagation::WorstCase,
    };
    let bound = bounds(N::LAYERS, N::DIMS, &case.weights, &values, how)
        .map_err(|e| format!("{name}: bounds: {e}"))?;
    // Each layer's output, when printed (the sweep), then the network's.
    if !out.layers.is_empty() && out.layers.len() != N::LAYERS.len() {
        return Err(format!(
            "{name}: {} layer outputs printed, {} layers",
            out.layers.len(),
            N::LAYERS.len()
        ));
    }
    let (mut diff, mut y) = (0.0f32, Vec::new());
    let tensors = out
        .layers
        .iter()
        .zip(N::LAYERS)
        .map(|(v, l)| (v, l.step.y, l.name))
        .chain([(&out.y, N::OUTPUT, "output")]);
    for (v, id, what) in tensors {
        let got = nhwc(id, v)?;
        if let Some((i, g, w, t)) = first_mismatch(&got, &values[id], &bound[id]) {
            return Err(format!(
                "{name}: {what}: element {i} (NHWC): firmware {g}, host reference {w}, bound {t}"
            ));
        }
        diff = diff.max(max_diff(&got, &values[id]));
        y = got; // the output comes last
    }
    Ok((case, (y, diff)))
}

/// What the firmware printed for one network.
struct Section {
    name: String,
    case: String,
    /// The output tensor, blocked layout.
    y: Vec<f32>,
    /// Every layer's output, blocked layout (the sweep prints them).
    layers: Vec<Vec<f32>>,
    /// An int8 network's output, NHWC (`q` lines).
    q: Vec<i8>,
    summary: Option<String>,
    /// `layer O_wbxTC` per layer.
    tiles: Vec<String>,
    weights: usize,
    arena: usize,
    stack: usize,
}

/// Splits the firmware's output into its networks' sections; an error
/// unless every section is complete and the output ends in `ok`.
fn parse(text: &str) -> Result<Vec<Section>, String> {
    let mut sections: Vec<Section> = Vec::new();
    let mut ok = false;
    for line in text.lines() {
        if let Some(c) = line.strip_prefix("small-rs firmware: ") {
            let name = c.split(" on ").next().unwrap_or("").to_string();
            sections.push(Section {
                name,
                case: c.to_string(),
                y: Vec::new(),
                layers: Vec::new(),
                q: Vec::new(),
                summary: None,
                tiles: Vec::new(),
                weights: usize::MAX,
                arena: 0,
                stack: 0,
            });
            continue;
        }
        if line == "ok" {
            ok = true;
            continue;
        }
        if let Some(e) = line.strip_prefix("error: ") {
            return Err(format!("the firmware failed: {e}"));
        }
        let s = sections
            .last_mut()
            .ok_or_else(|| format!("`{line}` before any `small-rs firmware:` line"))?;
        let values = if let Some(rest) = line.strip_prefix("y ") {
            Some((&mut s.y, rest))
        } else if let Some((tag, rest)) = line.strip_prefix('t').and_then(|r| r.split_once(' ')) {
            let k: usize = number(Some(tag), "layer index")?;
            if k == s.layers.len() {
                s.layers.push(Vec::new());
            } else if k + 1 != s.layers.len() {
                return Err(format!("line `{line}`: layer {k} out of order"));
            }
            Some((&mut s.layers[k], rest))
        } else {
            None
        };
        if let Some((v, rest)) = values {
            let mut words = rest.split_whitespace();
            let first: usize = number(words.next(), "value index")?;
            if first != v.len() {
                return Err(format!(
                    "line `{line}`: index {first}, expected {}",
                    v.len()
                ));
            }
            for w in words {
                let bits = u32::from_str_radix(w, 16).map_err(|e| format!("`{w}`: {e}"))?;
                v.push(f32::from_bits(bits));
            }
        } else if let Some(rest) = line.strip_prefix("q ") {
            let mut words = rest.split_whitespace();
            let first: usize = number(words.next(), "value index")?;
            if first != s.q.len() {
                return Err(format!(
                    "line `{line}`: index {first}, expected {}",
                    s.q.len()
                ));
            }
            for w in words {
                s.q.push(number(Some(w), "int8 value")?);
            }
        } else if let Some(b) = line.strip_prefix("blocking ") {
            s.tiles.push(b.to_string());
        } else if line.starts_with("class ") || line.starts_with("reconstruction ") {
            s.summary = Some(line.to_string());
        } else if let Some(m) = line.strip_prefix("memory: ") {
            // "weights W B (flash), arena A B, stack high-water S B"
            let n: Vec<usize> = m
                .split_whitespace()
                .filter_map(|w| w.parse().ok())
                .collect();
            let [weights, arena, stack] = n[..] else {
                return Err(format!("`{line}` has {} numbers, expected 3", n.len()));
            };
            (s.weights, s.arena, s.stack) = (weights, arena, stack);
        }
    }
    if let Some(s) = sections.iter().find(|s| s.weights == usize::MAX) {
        return Err(format!("{}: no `memory:` line", s.name));
    }
    if !ok || sections.is_empty() {
        return Err("no final `ok`: the firmware stopped early".into());
    }
    Ok(sections)
}

fn number<T: std::str::FromStr>(w: Option<&str>, what: &str) -> Result<T, String> {
    w.and_then(|w| w.parse().ok())
        .ok_or_else(|| format!("missing or bad {what}"))
}

/// Instructions and estimated cycles of the first window of the QEMU
/// plugin's output (`cycle_window`: `window 0 <instructions> <cycles>
/// <cycles with load pairing>`). The report quotes the plain estimate,
/// as issue #23's anchors do.
fn parse_counts(text: &str) -> Result<Counts, String> {
    let line = text
        .lines()
        .find_map(|l| l.strip_prefix("window 0 "))
        .ok_or_else(|| format!("no `window 0` line in the plugin's output: {text:?}"))?;
    let mut w = line.split_whitespace();
    Ok(Counts {
        instructions: number(w.next(), "instruction count")?,
        cycles: number(w.next(), "cycle estimate")?,
    })
}

/// Bytes of an image by where they live.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Sizes {
    /// Code and constants in flash (`.vector_table`, `.text`, `.rodata`).
    code: usize,
    /// Initialized data: in flash, copied to RAM at boot.
    data: usize,
    /// Zeroed RAM (`.bss`, `.uninit`): the arena.
    bss: usize,
}

impl Sizes {
    /// From the section headers of a 32-bit little-endian ELF file:
    /// allocated sections below [`RAM_ORIGIN`] are flash; above it, those
    /// with contents are data (stored in flash too), the rest zeroed RAM.
    fn of_elf(elf: &[u8]) -> Result<Sizes, String> {
        let u32_at = |o: usize| -> Result<u32, String> {
            elf.get(o..o + 4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .ok_or_else(|| format!("truncated at byte {o} of {}", elf.len()))
        };
        let u16_at = |o: usize| -> Result<usize, String> {
            elf.get(o..o + 2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]) as usize)
                .ok_or_else(|| format!("truncated at byte {o} of {}", elf.len()))
        };
        if elf.get(..6) != Some(&[0x7f, b'E', b'L', b'F', 1, 1][..]) {
            return Err("not a 32-bit little-endian ELF file".into());
        }
        let (shoff, shentsize, shnum) = (u32_at(0x20)? as usize, u16_at(0x2e)?, u16_at(0x30)?);
        const SHT_NOBITS: u32 = 8;
        const SHF_ALLOC: u32 = 2;
        let mut s = Sizes::default();
        for i in 0..shnum {
            let h = shoff + i * shentsize;
            let (kind, flags, addr, size) = (
                u32_at(h + 4)?,
                u32_at(h + 8)?,
                u32_at(h + 12)?,
                u32_at(h + 20)? as usize,
            );
            if flags & SHF_ALLOC == 0 {
                continue;
            }
            match (addr < RAM_ORIGIN, kind == SHT_NOBITS) {
                (true, _) => s.code += size,
                (false, false) => s.data += size,
                (false, true) => s.bss += size,
            }
        }
        Ok(s)
    }

    fn flash(&self) -> usize {
        self.code + self.data
    }
}

fn kib(b: usize) -> String {
    format!("{:.1}", b as f64 / 1024.0)
}

/// The size report: each image beside the Nano 33 BLE's budget and
/// TensorFlow Lite Micro on the same emulator.
fn report(runs: &[&Run]) -> String {
    let mut r = String::new();
    let _ = writeln!(
        r,
        "Cortex-M4F firmware (examples/mcu, qemu-system-arm mps2-an386), one image per network; \
         KiB. Budget: Arduino Nano 33 BLE, flash {} KiB, RAM {} KiB.\n",
        NANO_FLASH / 1024,
        NANO_RAM / 1024
    );
    let _ = writeln!(
        r,
        "| network | type | weights (flash) | flash total | arena | stack | RAM total | fits the Nano 33 BLE | instructions | est. cycles | TFLM, same emulator | small-rs / TFLM |"
    );
    let _ = writeln!(
        r,
        "|---|---|---:|---:|---:|---:|---:|---|---:|---:|---|---|"
    );
    for x in runs {
        let ram = x.ram();
        let fits = match (x.size.flash() <= NANO_FLASH, ram <= NANO_RAM) {
            (true, true) => "yes".to_string(),
            (f, m) => {
                let mut why = Vec::new();
                if !f {
                    why.push(format!(
                        "flash {} > {} KiB",
                        kib(x.size.flash()),
                        NANO_FLASH / 1024
                    ));
                }
                if !m {
                    why.push(format!("RAM {} > {} KiB", kib(ram), NANO_RAM / 1024));
                }
                format!("**no**: {}", why.join(", "))
            }
        };
        let mega = |n: u64| format!("{:.2} M", n as f64 / 1e6);
        let (insn, cycles) = x
            .counts
            .map_or(("not counted".into(), "not counted".into()), |c| {
                (mega(c.instructions), mega(c.cycles))
            });
        let (tflm, ratio) = match (x.tflm, x.counts) {
            (Tflm::F32 { instructions }, c) => (
                format!("{instructions} M instructions (reference kernels)"),
                c.map_or(String::new(), |_| "see instructions".into()),
            ),
            (
                Tflm::Int8 {
                    instructions,
                    cycles,
                    arena,
                },
                c,
            ) => (
                format!(
                    "CMSIS-NN: {instructions:.2} M instructions, {cycles:.2} M cycles, arena {arena:.1} KB"
                ),
                c.map_or(String::new(), |c| {
                    format!(
                        "instructions {:.2}x, cycles {:.2}x, arena {:.2}x",
                        c.instructions as f64 / (instructions * 1e6),
                        c.cycles as f64 / (cycles * 1e6),
                        x.arena as f64 / (arena * 1e3)
                    )
                }),
            ),
        };
        let _ = writeln!(
            r,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
            x.name,
            if x.int8 { "int8" } else { "f32" },
            kib(x.weights),
            kib(x.size.flash()),
            kib(x.arena),
            kib(x.stack),
            kib(ram),
            fits,
            insn,
            cycles,
            tflm,
            ratio
        );
    }
    let _ = writeln!(
        r,
        "\nflash total = code + constants + weights + initialized data; RAM total = data + bss \
         (the arena) + stack high-water. Instructions are QEMU guest instructions between \
         `mark_start` and `mark_stop`; est. cycles weight them by the Cortex-M4 TRM's timings \
         (shared/tools/qemu-insn-window/cycle_window.c, no wait states). TFLM's arena is in KB \
         of 1000 bytes, as measured."
    );
    for x in runs {
        let _ = writeln!(
            r,
            "- {}{}: {}; {}; {}; tiles (O_wb x TC): {}",
            x.name,
            if x.int8 { " int8" } else { "" },
            x.what,
            x.summary,
            x.max_diff,
            x.tiles.join(", ")
        );
    }
    r
}

#[test]
fn output_parses_and_rejects() {
    let good = "small-rs firmware: ad on cortex_m4: x\ny 0 3f800000 40000000\ny 2 c0400000\n\
                reconstruction mse 1\nblocking fc1 4x4\n\
                memory: weights 8 B (flash), arena 4 B, stack high-water 100 B\n\
                small-rs firmware: b on cortex_m4: z\nt0 0 3f800000\nt1 0 00000000\ny 0 00000000\n\
                memory: weights 0 B (flash), arena 4 B, stack high-water 9 B\nok\n";
    let o = parse(good).unwrap();
    assert_eq!(o.len(), 2);
    assert_eq!((o[0].name.as_str(), o[1].name.as_str()), ("ad", "b"));
    assert_eq!(o[0].y, [1.0, 2.0, -3.0]);
    assert_eq!((o[0].weights, o[0].arena, o[0].stack), (8, 4, 100));
    assert_eq!(o[0].tiles, ["fc1 4x4"]);
    assert_eq!(o[1].summary, None);
    assert_eq!(o[1].layers, [vec![1.0], vec![0.0]]);
    assert!(parse(&good.replace("t1 0", "t3 0")).is_err());
    // A missing line, an out-of-order index, an error and an early stop fail.
    assert!(parse(&good.replace("y 2", "y 3")).is_err());
    assert!(parse(&good.replace("ok\n", "")).is_err());
    assert!(parse(&good.replacen("memory", "mem", 1)).is_err());
    assert!(parse(&format!("{good}error: arena too small\n")).is_err());
    assert!(parse("y 0 00000000\nok\n").is_err());
    let int8 = "small-rs firmware: ad int8 on cortex_m4: x\nq 0 -128 5 127\nq 3 0\n\
                memory: weights 8 B (flash), arena 4 B, stack high-water 100 B\nok\n";
    assert_eq!(parse(int8).unwrap()[0].q, [-128, 5, 127, 0]);
    assert!(parse(&int8.replace("q 3", "q 4")).is_err());
    assert!(parse(&int8.replace("127", "128")).is_err());
    assert_eq!(
        parse_counts("window 0 1234 2000 1900\ntotal 99\n"),
        Ok(Counts {
            instructions: 1234,
            cycles: 2000
        })
    );
    assert!(parse_counts("total 99\n").is_err());
    assert!(parse_counts("window 0 1234\n").is_err());
}

#[test]
fn elf_sizes_of_a_built_elf() {
    // A hand-made ELF: header plus three section headers (text in flash,
    // data and bss in RAM).
    let mut elf = vec![0u8; 0x34];
    elf[..6].copy_from_slice(&[0x7f, b'E', b'L', b'F', 1, 1]);
    let shoff = elf.len() as u32;
    elf[0x20..0x24].copy_from_slice(&shoff.to_le_bytes());
    elf[0x2e..0x30].copy_from_slice(&40u16.to_le_bytes());
    elf[0x30..0x32].copy_from_slice(&4u16.to_le_bytes());
    for (kind, flags, addr, size) in [
        (1u32, 6u32, 0x400u32, 1000u32),
        (1, 3, RAM_ORIGIN, 20),
        (8, 3, RAM_ORIGIN + 20, 300),
        (1, 0, 0, 5000), // debug info: not allocated
    ] {
        let mut h = [0u8; 40];
        for (o, v) in [(4, kind), (8, flags), (12, addr), (20, size)] {
            h[o..o + 4].copy_from_slice(&v.to_le_bytes());
        }
        elf.extend_from_slice(&h);
    }
    let s = Sizes::of_elf(&elf).unwrap();
    assert_eq!(
        s,
        Sizes {
            code: 1000,
            data: 20,
            bss: 300
        }
    );
    assert_eq!(s.flash(), 1020);
    assert!(Sizes::of_elf(&elf[..0x40]).is_err());
    assert!(Sizes::of_elf(b"not an elf").is_err());
}
