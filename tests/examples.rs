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
    use small_core::Arch;
    use small_examples::peak::{fma_chains, fma_peak};

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
}
