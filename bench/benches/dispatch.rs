//! In-process dispatch: the same request through ours, the hand-written
//! handler and jsonrpsee, one criterion group per case.
//!
//! `cargo bench --bench dispatch` (from `bench/`), then
//! `cargo run --release --bin ratios` for the ratios.

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use rpc_bench::{cases, handwritten, jsonrpsee_impl, ours};
use rpc_runtime::Context;

fn dispatch(c: &mut Criterion) {
    let engine = ours::engine();
    let cx = Context::default();
    let module = jsonrpsee_impl::module();
    let mut out = Vec::with_capacity(4096);

    for case in cases::all() {
        let message = case.message.as_bytes();
        // The three must agree before their times mean anything.
        ours::call(&engine, &cx, message, &mut out);
        let from_ours = cases::meaning(&out);
        out.clear();
        handwritten::handle(message, &mut out);
        let from_handwritten = cases::meaning(&out);
        let from_jsonrpsee = if case.batch {
            jsonrpsee_impl::call_batch(&module, &case.message, &mut out);
            cases::meaning(&out)
        } else {
            cases::meaning(jsonrpsee_impl::call(&module, &case.message).get().as_bytes())
        };
        assert_eq!(from_ours, from_handwritten, "{}: ours and handwritten disagree", case.name);
        assert_eq!(from_ours, from_jsonrpsee, "{}: ours and jsonrpsee disagree", case.name);

        let mut group = c.benchmark_group(case.name);
        group.bench_function("ours", |b| {
            b.iter(|| {
                ours::call(&engine, &cx, black_box(message), &mut out);
                black_box(out.len())
            })
        });
        group.bench_function("handwritten", |b| {
            b.iter(|| {
                out.clear();
                handwritten::handle(black_box(message), &mut out);
                black_box(out.len())
            })
        });
        if case.batch {
            group.bench_function("jsonrpsee", |b| {
                b.iter(|| {
                    jsonrpsee_impl::call_batch(&module, black_box(&case.message), &mut out);
                    black_box(out.len())
                })
            });
        } else {
            group.bench_function("jsonrpsee", |b| {
                b.iter(|| black_box(jsonrpsee_impl::call(&module, black_box(&case.message))))
            });
        }
        group.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(50);
    targets = dispatch
}
criterion_main!(benches);
