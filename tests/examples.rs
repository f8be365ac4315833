//! Unit tests of the examples crate's helpers (its library has no test
//! harness of its own: building small-examples a second time as a test
//! crate, every network's kernels again, cost each test stage a minute).

mod check {
    use small_core::load::{Generated, LayerWeights};
    use small_core::load::{LayerRef, LoadError, WeightSource};
    use small_examples::check::check_layers;
    use small_examples::models::sweep::SweepConv;

    /// Generated weights with weight 3 of operator `op` NaN.
    struct Poisoned {
        op: usize,
    }

    impl WeightSource for Poisoned {
        fn layer(
            &self,
            r: LayerRef,
            spec: &small_core::LayerSpec,
        ) -> Result<LayerWeights, LoadError> {
            let mut w = Generated { seed: 7 }.layer(r, spec)?;
            if r.op == self.op {
                w.weights[3] = f32::NAN;
            }
            Ok(w)
        }
    }

    /// A NaN weight is named, not reported as `got 0, expected 0 within NaN`.
    #[test]
    fn a_nan_weight_is_named() {
        let source = Poisoned { op: 1 };
        let arch = small_core::Arch::best_available();
        let net = SweepConv::load(&source, arch).unwrap();
        let d = SweepConv::DIMS[0];
        let input: Vec<f32> = (0..d.elements()).map(|i| (i % 7) as f32 / 7.0).collect();
        let values = SweepConv::reference(&source, &input).unwrap();
        let mut arena = vec![0.0; SweepConv::ARENA];
        let m = check_layers(&net, &source, &values, &mut arena)
            .unwrap()
            .expect("a NaN weight must fail the check");
        let n = SweepConv::LAYERS[1].spec.unwrap().weights_len();
        assert!(
            m.starts_with("layer 1 `b` (op 1) element 0: ")
                && m.contains("NaN (")
                && m.ends_with(&format!(": weight 3 of {n} is NaN")),
            "{m}"
        );
    }
}

mod peak {
    use small_core::ir::cost::{Rates, Tile};
    use small_core::{Arch, LayerSpec};
    use small_examples::peak::{CALL_CYCLES, EFFICIENCY, Fit, Measured, TILE_CYCLES};
    use small_examples::peak::{calibrate, fit, fma_chains, fma_peak};

    /// Two usable cores answer within the probe's 0.1 s per round trip
    /// (a positive median below it); fewer give `None` at once.
    #[test]
    fn cross_core_round_trip_needs_two_cores() {
        let trip = small_examples::peak::cross_core_round_trip(300);
        if small_core::threads::available() < 2 {
            assert_eq!(trip, None);
        } else if let Some(d) = trip {
            // `None` stays possible: under load the echo thread can lose
            // its core for longer than the probe waits.
            assert!(d > std::time::Duration::ZERO && d < std::time::Duration::from_millis(100));
        }
    }

    /// One spread per thread, each a positive rate ordered low <= median
    /// <= best, on the arches with a probe (and for the reads); `None` for
    /// one thread or without a probe.
    #[test]
    fn probes_at_once_give_every_thread_a_rate() {
        use small_examples::peak::{fma_together, l1_read_together, l2_read_together};
        for each in [l1_read_together(2, 0.01), l2_read_together(2, 0.01)] {
            let each = each.expect("two threads");
            assert_eq!(each.len(), 2);
            assert!(
                each.iter()
                    .all(|s| 0.0 < s.low && s.low <= s.median && s.median <= s.best)
            );
        }
        assert_eq!(l1_read_together(1, 0.01), None);
        let arch = small_core::arch::available()
            .next()
            .expect("an arch runs here");
        assert_eq!(small_examples::peak::at_once_report(arch, 1, 0.01), "-");
        let report = small_examples::peak::at_once_report(arch, 2, 0.01);
        for what in ["FMA ", ", L1 read ", " GB/s = ", ", L2 read "] {
            assert!(report.contains(what), "{what:?} in {report}");
        }
        for &arch in Arch::ALL {
            assert_eq!(fma_together(arch, 1, 0.01), None, "{}", arch.name());
            let each = fma_together(arch, 3, 0.01);
            if fma_chains(arch).is_none() || !arch.available() {
                assert_eq!(each, None, "{}", arch.name());
                continue;
            }
            let each = each.expect("a probe on a supported arch");
            assert_eq!(each.len(), 3, "{}", arch.name());
            for s in each {
                assert!(
                    0.0 < s.low && s.low <= s.median && s.median <= s.best,
                    "{s:?}"
                );
            }
        }
    }

    #[test]
    fn fma_peak_on_simd_arches_only() {
        for &arch in Arch::ALL {
            let m = &arch.params().machine;
            match fma_chains(arch) {
                // Portable: compiled everywhere, no FMA ceiling.
                None => assert!(m.cfg.is_empty(), "{}", arch.name()),
                Some(n) => {
                    // At least latency x pipes FMAs in flight, the peak.
                    assert!(n >= m.fma_latency * m.fma_per_cycle, "{}", arch.name());
                    assert!(n + 2 <= m.vector_regs, "{}", arch.name());
                }
            }
            let peak = fma_peak(arch, 0.0);
            assert_eq!(
                peak.is_some(),
                arch.available() && fma_chains(arch).is_some(),
                "{}",
                arch.name()
            );
            assert!(peak.is_none_or(|p| p > 0.0), "{}", arch.name());
        }
        assert_eq!(fma_chains(Arch::Reference), None);
    }

    /// Layers timed by the model itself with a known calibration (call
    /// 300 cycles, tile 6, efficiency 0.7 at 3 GHz), and the machine
    /// numbers the fit starts from.
    fn made_by_the_model() -> (Vec<Measured>, Rates) {
        let hz = 3e9;
        let base = Rates {
            flops: 64.0 * hz,
            l1: 100e9,
            l2: 50e9,
            memory: 10e9,
            l1_bytes: 48 << 10,
            l2_bytes: 2 << 20,
            call: CALL_CYCLES / hz,
            tile: TILE_CYCLES.map(|c| c / hz),
            efficiency: EFFICIENCY,
        };
        let truth = Fit {
            call_cycles: 300.0,
            tile_cycles: 6.0,
            efficiency: 0.7,
            error: 0.0,
        }
        .rates(&base);
        let tile = |o_wb, tc| Tile {
            o_wb,
            tc,
            rate: 1.0,
            accumulators: o_wb * tc / 16,
            int8_dot: 4,
            dot_slots: 1,
            folds: false,
            one_column_rate: 1.0,
        };
        // Call-, tile- and FMA-dominated layers, so each number matters.
        let layers = [
            (LayerSpec::new(1, 1, 16, 16, 1), tile(4, 16), (1, 4)),
            (LayerSpec::new(1, 1, 16, 16, 1), tile(1, 16), (8, 64)),
            (LayerSpec::new(1, 1, 256, 256, 1), tile(4, 64), (6, 6)),
            (LayerSpec::new(3, 3, 32, 32, 1), tile(8, 32), (16, 16)),
            (LayerSpec::new(1, 1, 64, 64, 1), tile(4, 64), (25, 5)),
        ]
        .into_iter()
        .map(|(spec, tile, hw)| {
            let mut m = Measured {
                spec,
                tile,
                input: hw,
                output: hw,
                pass_bytes: 0,
                seconds: 0.0,
            };
            m.seconds = m.predicted(&truth);
            m
        })
        .collect();
        (layers, base)
    }

    /// The fit finds the calibration that made the times again, with no
    /// error left.
    #[test]
    fn the_fit_recovers_the_calibration_that_made_the_times() {
        let (layers, base) = made_by_the_model();
        let f = fit(&layers, &base).expect("layers given");
        assert_eq!((f.call_cycles, f.tile_cycles), (300.0, 6.0), "{f:?}");
        assert!((f.efficiency - 0.7).abs() < 1e-9, "{f:?}");
        assert!(f.error < 1e-9, "{f:?}");
        assert_eq!(fit(&[], &base), None);
    }

    /// The probes' fit too, with the call's cycles given or not; given
    /// wrong, the error shows it.
    #[test]
    fn the_probe_fit_recovers_it_with_the_call_given_or_not() {
        let (layers, base) = made_by_the_model();
        for call in [None, Some(300.0)] {
            let f = calibrate(&layers, &base, call).expect("layers given");
            assert_eq!((f.call_cycles, f.tile_cycles), (300.0, 6.0), "{f:?}");
            assert!((f.efficiency - 0.7).abs() < 1e-9, "{f:?}");
            assert!(f.error < 1e-9, "{f:?}");
        }
        let wrong = calibrate(&layers, &base, Some(1000.0)).expect("layers given");
        assert_eq!(wrong.call_cycles, 1000.0);
        assert!(wrong.error > 0.01, "{wrong:?}");
        assert_eq!(calibrate(&[], &base, None), None);
    }

    /// On the running machine's best arch with an FMA peak, both element
    /// types' probes run and calibrate the model (their times are the
    /// machine's; only that a calibration comes out is checked).
    #[test]
    fn the_probes_calibrate_both_types() {
        let Some(arch) = small_core::arch::available().find(|a| fma_chains(*a).is_some()) else {
            return;
        };
        let peak = fma_peak(arch, 0.01).expect("an FMA arch");
        let base = small_examples::peak::rates(arch, peak * 1e9, 0.001).expect("bandwidths");
        let c = small_examples::calibrate::calibrated(arch, &base);
        assert_eq!(c.errors, [None, None], "{c}");
        for (d, fit) in c.fits.iter().enumerate() {
            let fit = fit.expect("probes ran");
            assert!(fit.error.is_finite(), "{c}");
            assert!(
                c.rates.efficiency[d] > 0.0 && c.rates.efficiency[d] <= 1.0,
                "{c}"
            );
            assert!(c.rates.tile[d] >= 0.0, "{c}");
        }
        assert!(c.rates.call > 0.0, "{c}");
        let head = format!(
            "cost model calibrated on {} probe layers per type: f32: call ",
            small_examples::calibrate::PROBES
        );
        assert!(c.to_string().starts_with(&head), "{c}");
    }
}
