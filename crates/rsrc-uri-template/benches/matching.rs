//! Benchmarks: routing one URI through 100 templates, matching 100 KB crafted URIs, and
//! parsing.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rsrc_uri_template::UriTemplate;

/// 100 realistic, mixed templates of the kind an MCP resources server registers.
fn router_templates() -> Vec<UriTemplate> {
    let shapes = [
        "file:///projects/p{i}/{+path}",
        "db://table{i}/{id}",
        "api://v1/users{i}/{user}/posts{?limit,offset}",
        "git://repo{i}/{owner}/{repo}/blob/{ref}/{+path}",
        "search://index{i}{?q,lang,page}",
        "s3://bucket{i}{/key*}",
        "mem://notes{i}/{year}/{month}/{slug}.md",
        "http://example.com/svc{i}/{version}/items/{item}{?fields*}",
        "issue://tracker{i}/{project}-{number}",
        "docs://site{i}/{lang}/{+page}{#section}",
    ];
    (0..100)
        .map(|i| {
            let t = shapes[i % shapes.len()].replace("{i}", &i.to_string());
            UriTemplate::parse(&t).expect("valid template")
        })
        .collect()
}

fn bench_router(c: &mut Criterion) {
    let templates = router_templates();
    let uri = "http://example.com/svc97/v2/items/a%20b?fields=id&x=1&fields=name";
    assert!(templates.iter().any(|t| t.matches(uri).is_some()));
    c.bench_function("route 1 URI through 100 templates", |b| {
        b.iter(|| {
            black_box(&templates)
                .iter()
                .filter_map(|t| t.matches(black_box(uri)).map(|c| (t.specificity(), c)))
                .max_by(|a, b| a.0.cmp(&b.0))
        });
    });
    let single = UriTemplate::parse("file:///docs/{name}{?rev}").expect("valid template");
    c.bench_function("match file:///docs/{name}{?rev}", |b| {
        b.iter(|| single.matches(black_box("file:///docs/readme.md?rev=3")));
    });
}

fn bench_long(c: &mut Criterion) {
    let mut group = c.benchmark_group("100 KB URI");
    group.sample_size(20);
    let cases = [
        (
            "file://{/segs*}",
            format!("file://{}", "/seg".repeat(25_000)),
        ),
        (
            "file:///{+path}{?q*}",
            format!("file:///{}?{}", "dir/".repeat(20_000), "k=v&".repeat(5)),
        ),
        ("{+x}{+y}", "a/".repeat(50_000)),
        (
            "x:{/a*}{/b*}{?q*}",
            format!("x:{}?{}", "/ab".repeat(30_000), "k=v&".repeat(2_500)),
        ),
    ];
    for (template, uri) in &cases {
        let t = UriTemplate::parse(template).expect("valid template");
        assert!(t.matches(uri).is_some(), "{template}");
        group.throughput(Throughput::Bytes(uri.len() as u64));
        group.bench_function(*template, |b| b.iter(|| t.matches(black_box(uri))));
    }
    // A near miss: the automaton runs to the last byte and fails there.
    let t = UriTemplate::parse("file://{/segs*}").expect("valid template");
    let miss = format!("file://{}^", "/seg".repeat(25_000));
    group.bench_function("file://{/segs*} (no match at the end)", |b| {
        b.iter(|| t.matches(black_box(&miss)));
    });
    group.finish();
}

fn bench_parse(c: &mut Criterion) {
    let templates = [
        "file:///docs/{name}",
        "http://example.com/svc{/version,kind}/items/{item}{?fields*,limit:3}{&page}{#frag}",
        "{var}{+path}{#x}{.dom*}{/seg*}{;p,q}{?a,b*}{&c:10}",
    ];
    for t in templates {
        c.bench_function(&format!("parse {t}"), |b| {
            b.iter(|| UriTemplate::parse(black_box(t)));
        });
    }
}

criterion_group!(benches, bench_router, bench_long, bench_parse);
criterion_main!(benches);
