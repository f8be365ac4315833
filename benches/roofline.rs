//! The roofline plot (SVG, `plotters`): arithmetic intensity (FLOPs per
//! compulsory byte) against GFLOP/s, log-log, with the measured FMA peaks
//! as compute ceilings, the measured L1 / L2 / DRAM read bandwidths as
//! slopes, and each case as one point per arch.

use plotters::coord::Shift;
use plotters::prelude::*;
use small_core::Arch;
use std::path::Path;

/// One measured case on one arch.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Case name.
    pub case: String,
    /// Arch name.
    pub arch: &'static str,
    /// FLOPs per compulsory byte.
    pub intensity: f64,
    /// Achieved GFLOP/s (median run).
    pub gflops: f64,
}

/// Everything the plot shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Roofline {
    /// Title (CPU and date).
    pub title: String,
    /// Compute ceilings: arch name and GFLOP/s.
    pub peaks: Vec<(&'static str, f64)>,
    /// Memory slopes: level name, buffer size label, and GB/s.
    pub bandwidths: Vec<(&'static str, String, f64)>,
    /// The cases.
    pub points: Vec<Point>,
}

/// Colors of the arches, by position in `Arch::ALL` (so avx512 red, avx2
/// blue, neon purple, cortex_m4 orange, reference green); more arches
/// than colors reuse them.
const PALETTE: [RGBColor; 8] = [
    RGBColor(200, 30, 30),
    RGBColor(30, 80, 200),
    RGBColor(130, 50, 170),
    RGBColor(220, 120, 0),
    RGBColor(40, 140, 60),
    RGBColor(0, 150, 160),
    RGBColor(160, 110, 40),
    RGBColor(210, 60, 150),
];

/// Color of an arch's ceiling and points; black for a name that is not a
/// registered arch.
fn color(arch: &str) -> RGBColor {
    Arch::ALL
        .iter()
        .position(|a| a.name() == arch)
        .map_or(BLACK, |i| PALETTE[i % PALETTE.len()])
}

/// An axis label for the key point `v` of a log axis: `1`, `2` and `5`
/// times a power of ten, else nothing.
fn tick(v: f64) -> String {
    if v <= 0.0 {
        return String::new();
    }
    let e = v.log10().floor();
    let m = (v / 10f64.powf(e)).round();
    if [1.0, 2.0, 5.0].contains(&m) {
        let decimals = (-e).max(0.0) as usize;
        format!("{:.*}", decimals, m * 10f64.powf(e))
    } else {
        String::new()
    }
}

/// Font size of the point labels, pixels.
const LABEL_PX: f64 = 12.0;

/// A label's box in pixels: left, top, right, bottom.
type Box4 = (i32, i32, i32, i32);

fn overlaps(a: Box4, b: Box4) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Where to put a label of `w x h` pixels for the point at `(x, y)`:
/// right of it, else left of it, moved up or down in line steps until it
/// lies inside `area` and overlaps nothing in `placed` (labels and
/// markers); the nearest free spot wins. The label's box is added to
/// `placed`.
fn place(x: i32, y: i32, w: i32, h: i32, area: Box4, placed: &mut Vec<Box4>) -> (i32, i32) {
    let inside = |b: Box4| b.0 >= area.0 && b.1 >= area.1 && b.2 <= area.2 && b.3 <= area.3;
    let mut best = None;
    'search: for k in 0..24 {
        // 0, +1, -1, +2, -2, ... lines.
        let step = (k + 1) / 2 * if k % 2 == 1 { 1 } else { -1 };
        for lx in [x + 8, x - 8 - w] {
            let ly = y - h / 2 + step * h;
            let b = (lx, ly, lx + w, ly + h);
            if inside(b) && !placed.iter().any(|p| overlaps(*p, b)) {
                best = Some((lx, ly));
                break 'search;
            }
        }
    }
    let (lx, ly) = best.unwrap_or((x + 8, y - h / 2));
    placed.push((lx, ly, lx + w, ly + h));
    (lx, ly)
}

impl Roofline {
    /// Writes the plot to `path` as SVG.
    pub fn write_svg(&self, path: &Path) -> Result<(), Box<dyn std::error::Error>> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let root = SVGBackend::new(path, (1400, 900)).into_drawing_area();
        self.draw(&root).map_err(|e| e.to_string())?;
        root.present().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Axis ranges: every point, ceiling and ridge, with a margin.
    fn ranges(&self) -> ((f64, f64), (f64, f64)) {
        let top = self.peaks.iter().map(|p| p.1).fold(1.0, f64::max);
        let pts = || {
            self.points
                .iter()
                .filter(|p| p.gflops > 0.0 && p.intensity > 0.0)
        };
        let ai_min = pts().map(|p| p.intensity).fold(1.0, f64::min);
        let ai_max = pts().map(|p| p.intensity).fold(10.0, f64::max);
        // The ridge of the slowest memory level with the top ceiling.
        let ridge = self
            .bandwidths
            .iter()
            .map(|b| top / b.2)
            .fold(1.0, f64::max);
        let gf_min = pts().map(|p| p.gflops).fold(top / 10.0, f64::min);
        let bw_min = self.bandwidths.iter().map(|b| b.2).fold(f64::MAX, f64::min);
        let x0 = (ai_min / 2.0).min(0.05);
        let y0 = (gf_min / 2.0).min(bw_min * x0);
        (
            (x0, (ai_max * 2.0).max(ridge * 2.0)),
            (y0.max(1e-3), top * 2.0),
        )
    }

    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), DrawingAreaErrorKind<DB::ErrorType>> {
        root.fill(&WHITE)?;
        let ((x0, x1), (y0, y1)) = self.ranges();
        let mut chart = ChartBuilder::on(root)
            .caption(&self.title, ("sans-serif", 20))
            .margin(15)
            .x_label_area_size(45)
            .y_label_area_size(65)
            .build_cartesian_2d((x0..x1).log_scale(), (y0..y1).log_scale())?;
        chart
            .configure_mesh()
            .x_desc("arithmetic intensity (FLOP per compulsory byte: input + output + weights)")
            .y_desc("GFLOP/s (median run, one thread)")
            // Enough key points for 1..9 per decade; `tick` labels 1, 2, 5.
            .x_labels(100)
            .y_labels(100)
            .x_label_formatter(&|v| tick(*v))
            .y_label_formatter(&|v| tick(*v))
            .bold_line_style(RGBColor(225, 225, 225))
            .max_light_lines(0)
            .draw()?;

        let small = ("sans-serif", LABEL_PX).into_font();
        let top = self.peaks.iter().map(|p| p.1).fold(0.0, f64::max);
        // Compute ceilings.
        for &(arch, peak) in &self.peaks {
            let c = color(arch);
            chart
                .draw_series(LineSeries::new([(x0, peak), (x1, peak)], c.stroke_width(2)))?
                .label(format!("{arch} FMA peak {peak:.0} GFLOP/s"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], c.stroke_width(2)));
        }
        // Memory slopes, up to the top ceiling.
        let grey = [
            RGBColor(90, 90, 90),
            RGBColor(140, 140, 140),
            RGBColor(40, 40, 40),
        ];
        for (i, (level, size, bw)) in self.bandwidths.iter().enumerate() {
            let c = grey[i % grey.len()];
            let x_end = (top / bw).min(x1);
            let style = ShapeStyle::from(&c).stroke_width(1);
            chart
                .draw_series(DashedLineSeries::new(
                    [(x0, bw * x0), (x_end, bw * x_end)],
                    8,
                    5,
                    style,
                ))?
                .label(format!("{level} read {bw:.0} GB/s ({size})"))
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], style));
        }
        // Points: one marker per case and arch.
        let mut archs: Vec<&'static str> = Vec::new();
        for p in &self.points {
            if !archs.contains(&p.arch) {
                archs.push(p.arch);
            }
        }
        for (k, arch) in archs.iter().enumerate() {
            let c = color(arch);
            let pts: Vec<(f64, f64)> = self
                .points
                .iter()
                .filter(|p| p.arch == *arch && p.gflops > 0.0 && p.intensity > 0.0)
                .map(|p| (p.intensity, p.gflops))
                .collect();
            let series = pts
                .into_iter()
                .map(move |xy| -> DynElement<DB, (f64, f64)> {
                    match k % 3 {
                        0 => Circle::new(xy, 5, c.filled()).into_dyn(),
                        1 => TriangleMarker::new(xy, 6, c.filled()).into_dyn(),
                        _ => Cross::new(xy, 5, c.stroke_width(2)).into_dyn(),
                    }
                });
            chart
                .draw_series(series)?
                .label(format!("{arch} cases"))
                .legend(move |xy| -> DynElement<DB, (i32, i32)> {
                    let xy = (xy.0 + 10, xy.1);
                    match k % 3 {
                        0 => Circle::new(xy, 5, c.filled()).into_dyn(),
                        1 => TriangleMarker::new(xy, 6, c.filled()).into_dyn(),
                        _ => Cross::new(xy, 5, c.stroke_width(2)).into_dyn(),
                    }
                });
        }
        // Labels: each point, in its arch's color, placed clear of the
        // markers and of the labels already drawn, highest points first;
        // a label moved away from its point gets a leader line.
        let mut order: Vec<&Point> = self
            .points
            .iter()
            .filter(|p| p.gflops > 0.0 && p.intensity > 0.0)
            .collect();
        order.sort_by(|a, b| b.gflops.total_cmp(&a.gflops));
        let (xs, ys) = chart.plotting_area().get_pixel_range();
        let area = (xs.start, ys.start, xs.end, ys.end);
        let mut placed: Vec<Box4> = order
            .iter()
            .map(|p| {
                let (x, y) = chart.backend_coord(&(p.intensity, p.gflops));
                (x - 6, y - 6, x + 7, y + 7)
            })
            .collect();
        for p in order {
            let (px, py) = chart.backend_coord(&(p.intensity, p.gflops));
            let text = format!("{} ({})", p.case, p.arch);
            let w = (text.len() as f64 * LABEL_PX * 0.55) as i32;
            let h = LABEL_PX as i32 + 1;
            let (lx, ly) = place(px, py, w, h, area, &mut placed);
            let c = color(p.arch);
            if (ly + h / 2 - py).abs() > h {
                let end = if lx > px { lx } else { lx + w };
                root.draw(&PathElement::new(
                    [(px, py), (end, ly + h / 2)],
                    c.mix(0.5).stroke_width(1),
                ))?;
            }
            root.draw(&Text::new(text, (lx, ly), small.clone().color(&c)))?;
        }
        chart
            .configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .draw()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_do_not_overlap() {
        let mut placed = Vec::new();
        let area = (0, 0, 1000, 1000);
        let a = place(100, 100, 50, 12, area, &mut placed);
        let b = place(100, 100, 50, 12, area, &mut placed);
        let c = place(100, 100, 50, 12, area, &mut placed);
        assert_eq!(a, (108, 94));
        assert_ne!(a, b);
        assert!(!overlaps(placed[0], placed[1]) && !overlaps(placed[1], placed[2]));
        assert_ne!(b, c);
        // Not past the area's left edge: the label goes right.
        let d = place(10, 500, 50, 12, (5, 0, 1000, 1000), &mut placed);
        assert_eq!(d.0, 18);
    }

    #[test]
    fn arches_have_distinct_colors() {
        let colors: Vec<RGBColor> = Arch::ALL.iter().map(|a| color(a.name())).collect();
        for (i, c) in colors.iter().enumerate().take(PALETTE.len()) {
            assert!(!colors[..i].contains(c), "{}", Arch::ALL[i].name());
            assert_ne!(*c, BLACK);
        }
        assert_eq!(color("no such arch"), BLACK);
    }

    #[test]
    fn ticks() {
        assert_eq!(tick(100.0), "100");
        assert_eq!(tick(200.0000001), "200");
        assert_eq!(tick(0.05), "0.05");
        assert_eq!(tick(0.5), "0.5");
        assert_eq!(tick(30.0), "");
        assert_eq!(tick(1.0), "1");
    }

    #[test]
    fn writes_an_svg() {
        let r = Roofline {
            title: "test".into(),
            peaks: vec![("avx512", 150.0), ("avx2", 75.0)],
            bandwidths: vec![
                ("L1", "16 KiB".into(), 300.0),
                ("DRAM", "64 MiB".into(), 20.0),
            ],
            points: vec![
                Point {
                    case: "conv 3x3 48x48x16".into(),
                    arch: "avx512",
                    intensity: 35.0,
                    gflops: 120.0,
                },
                Point {
                    case: "relu 48x48x16".into(),
                    arch: "avx2",
                    intensity: 0.125,
                    gflops: 5.0,
                },
            ],
        };
        let path =
            std::env::temp_dir().join(format!("small-bench-test-{}.svg", std::process::id()));
        r.write_svg(&path).unwrap();
        let svg = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).ok();
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        assert!(svg.contains("conv 3x3 48x48x16 (avx512)"));
        assert!(svg.contains("avx2 FMA peak 75 GFLOP/s"));
        assert!(svg.contains("DRAM read 20 GB/s"));
    }
}
