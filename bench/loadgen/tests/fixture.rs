//! `mcp-bench fixture DIR`: the fixture written once, with every file, and left alone by
//! a second run while its stamp says it is current.

use std::process::Command;

fn files_under(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| if p.is_dir() { files_under(&p) } else { 1 })
        .sum()
}

#[test]
fn the_fixture_is_written_once_with_every_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = || {
        let status = Command::new(env!("CARGO_BIN_EXE_mcp-bench"))
            .arg("fixture")
            .arg(dir.path())
            .status()
            .unwrap();
        assert!(status.success());
    };
    run();
    let root = dir.path().join("root");
    assert_eq!(files_under(&root), 10_002);
    assert_eq!(
        std::fs::metadata(root.join("big.txt")).unwrap().len(),
        10 << 20
    );
    assert_eq!(
        std::fs::metadata(root.join("blob.bin")).unwrap().len(),
        1 << 20
    );
    let written = std::fs::metadata(root.join("small/d42/f4242.txt"))
        .unwrap()
        .modified()
        .unwrap();
    run();
    let again = std::fs::metadata(root.join("small/d42/f4242.txt"))
        .unwrap()
        .modified()
        .unwrap();
    assert_eq!(written, again, "a current fixture is not written again");
}
