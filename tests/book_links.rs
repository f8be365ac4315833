//! The book's links and includes (`book/src`): every relative link names a
//! file that exists and, with `#anchor`, a heading of that file; every
//! `{{#include}}` names a file that exists, an `ANCHOR:` it has, or a
//! line range inside it. mdBook itself only warns about some of these, and
//! no link checker installs for mdBook 0.5.

use std::path::{Path, PathBuf};

fn book() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../book/src")
}

fn chapters() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(book())
        .expect("book/src")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    v.sort();
    v
}

/// The lines of `text` outside fenced code blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|l| {
            if l.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// mdBook's id of a heading: lower case, alphanumerics, `-` and `_` kept,
/// spaces to `-`, everything else dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn headings(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    prose(&text)
        .into_iter()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|h| slug(h.trim_start_matches('#')))
        .collect()
}

/// Targets of the Markdown links `[text](target)` in `line`.
fn links(line: &str) -> Vec<&str> {
    line.match_indices("](")
        .filter_map(|(i, _)| {
            let rest = &line[i + 2..];
            rest.find(')').map(|j| &rest[..j])
        })
        .collect()
}

/// Problems with the link `target` in `file`.
fn check_link(file: &Path, target: &str) -> Option<String> {
    if target.starts_with("http://") || target.starts_with("https://") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let dest = if path.is_empty() {
        file.to_path_buf()
    } else {
        file.parent().expect("in book/src").join(path)
    };
    if !dest.exists() {
        return Some(format!("`{target}`: no file {}", dest.display()));
    }
    let is_md = dest.extension().is_some_and(|e| e == "md");
    if !anchor.is_empty() && is_md && !headings(&dest).iter().any(|h| h == anchor) {
        return Some(format!(
            "`{target}`: no heading `#{anchor}` in {} (headings: {:?})",
            dest.display(),
            headings(&dest)
        ));
    }
    None
}

/// Problems with `{{#include spec}}` in `file`.
fn check_include(file: &Path, spec: &str) -> Option<String> {
    let mut parts = spec.split(':');
    let path = file.parent()?.join(parts.next()?);
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Some(format!("`{spec}`: cannot read {}", path.display()));
    };
    let lines = text.lines().count();
    let rest: Vec<&str> = parts.collect();
    match rest[..] {
        [] => None,
        [anchor] if anchor.parse::<usize>().is_err() => {
            let open = format!("ANCHOR: {anchor}");
            let close = format!("ANCHOR_END: {anchor}");
            (!text.contains(&open) || !text.contains(&close))
                .then(|| format!("`{spec}`: no `{open}` ... `{close}` in {}", path.display()))
        }
        _ => {
            let n: Vec<usize> = rest.iter().filter_map(|r| r.parse().ok()).collect();
            n.iter()
                .any(|&k| k == 0 || k > lines)
                .then(|| format!("`{spec}`: lines outside 1..={lines} of {}", path.display()))
        }
    }
}

/// A line-range include of a generated snapshot (`small-macros/snapshots/`)
/// shifts whenever the emitter changes, so the chapter states the range's
/// first line in a comment just above the code block, `<!-- starts: TEXT
/// -->`; a problem if it is missing or no longer the file's line there
/// (trimmed). `before` is the chapter's text up to the include.
fn check_start(file: &Path, spec: &str, before: &str) -> Option<String> {
    let mut parts = spec.split(':');
    let (path, first) = (parts.next()?, parts.next()?.parse::<usize>().ok()?);
    if !path.contains("small-macros/snapshots/") {
        return None;
    }
    // The comment sits above the fence line, which sits above the include.
    let comment = before.lines().rev().take(3).find_map(|l| {
        l.trim()
            .strip_prefix("<!-- starts: ")?
            .strip_suffix(" -->")
            .map(str::to_string)
    });
    let Some(want) = comment else {
        return Some(format!(
            "`{spec}`: no `<!-- starts: ... -->` above it naming its first line"
        ));
    };
    let text = std::fs::read_to_string(file.parent()?.join(path)).ok()?;
    let got = text.lines().nth(first - 1)?.trim();
    (got != want).then(|| {
        format!("`{spec}` starts at `{got}`, the chapter says `{want}`: the snapshot moved")
    })
}

#[test]
fn book_links_and_includes_resolve() {
    let mut bad = Vec::new();
    let (mut n_links, mut n_includes) = (0, 0);
    for file in chapters() {
        let text = std::fs::read_to_string(&file).expect("chapter");
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        for line in prose(&text) {
            for t in links(line) {
                n_links += 1;
                if let Some(e) = check_link(&file, t) {
                    bad.push(format!("{name}: {e}"));
                }
            }
        }
        // Includes sit inside code blocks: look at every line.
        for (i, _) in text.match_indices("{{#include ") {
            let rest = &text[i + "{{#include ".len()..];
            let spec = rest.split("}}").next().unwrap_or("").trim();
            n_includes += 1;
            if let Some(e) = check_include(&file, spec) {
                bad.push(format!("{name}: {e}"));
            } else if let Some(e) = check_start(&file, spec, &text[..i]) {
                bad.push(format!("{name}: {e}"));
            }
        }
    }
    println!("book: {n_links} links and {n_includes} includes checked");
    assert!(n_links > 10 && n_includes > 10, "the scan found too little");
    assert!(bad.is_empty(), "broken:\n{}", bad.join("\n"));
}

#[test]
fn the_checker_catches_what_it_should() {
    let chapter = book().join("quickstart.md");
    assert_eq!(slug(" Reading `Layer::explain()`"), "reading-layerexplain");
    assert!(check_link(&chapter, "memory.md").is_none());
    assert!(check_link(&chapter, "no-such-chapter.md").is_some());
    assert!(check_link(&chapter, "mlperf-tiny.md#golden-verification").is_none());
    assert!(check_link(&chapter, "mlperf-tiny.md#no-such-heading").is_some());
    assert!(check_include(&chapter, "../../examples/mcu/build.rs:emit").is_none());
    assert!(check_include(&chapter, "../../examples/mcu/build.rs:nope").is_some());
    assert!(check_include(&chapter, "../../examples/mcu/build.rs:1:5").is_none());
    assert!(check_include(&chapter, "../../examples/mcu/build.rs:1:99999").is_some());
    assert_eq!(links("see [a](x.md) and [b](y.md#z)"), ["x.md", "y.md#z"]);
    let kernel = book().join("generated-kernel.md");
    let snapshot = "../../small-macros/snapshots/conv3x3.rs:1:24";
    let above = |first: &str| format!("<!-- starts: {first} -->\n```rust,ignore\n");
    assert!(check_start(&kernel, snapshot, "```rust,ignore\n").is_some());
    assert!(check_start(&kernel, snapshot, &above("pub mod avx2 {")).is_some());
    let line1 = std::fs::read_to_string(book().join("../../small-macros/snapshots/conv3x3.rs"))
        .expect("snapshot")
        .lines()
        .next()
        .expect("a first line")
        .trim()
        .to_string();
    assert!(check_start(&kernel, snapshot, &above(&line1)).is_none());
    assert!(check_start(&chapter, "../../examples/mcu/build.rs:1:5", "").is_none());
}

/// The README shows the user crate `examples/tflite-app` as it is: its
/// `main.rs`, verbatim.
#[test]
fn readme_shows_the_user_crate_verbatim() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let main = std::fs::read_to_string(root.join("examples/tflite-app/src/main.rs")).unwrap();
    assert!(
        readme.contains(&main),
        "README.md does not show examples/tflite-app/src/main.rs as it is"
    );
}
