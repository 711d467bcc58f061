#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Issue 15: the C example host (`examples/c/host.c`) and its error checks, built by this test
//! with the system's C compiler (`$CC`, else `cc`) against the static library, then run: a
//! scripted local conversation to a streamed answer, and every entry point given null and
//! malformed arguments. Both run again under valgrind when it is installed (required when
//! `AE_REQUIRE_VALGRIND` is set, as CI does): no leak, no invalid access.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The directory cargo put this crate's static library in (beside this test's executable).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for dir in [deps, deps.parent().unwrap()] {
        if dir.join("libagent_engine.a").exists() {
            return dir.to_path_buf();
        }
    }
    panic!("libagent_engine.a not found beside {}", exe.display());
}

fn build_host() -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-host");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(crate_dir.join("examples/c/host.c"))
        .arg(library_dir().join("libagent_engine.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("the C compiler {cc:?} did not start: {e}"));
    assert!(status.success(), "{cc} failed to build examples/c/host.c");
    out
}

fn run(host: &Path, args: &[&str]) -> String {
    let out = Command::new(host).args(args).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{} {args:?}: {}\n{stdout}{}",
        host.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

fn valgrind() -> Option<PathBuf> {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("AE_REQUIRE_VALGRIND").is_some() {
        panic!("AE_REQUIRE_VALGRIND is set but valgrind is not installed");
    }
    found.then(|| PathBuf::from("valgrind"))
}

#[test]
fn the_c_host_streams_an_answer_and_every_entry_point_refuses_bad_arguments() {
    let host = build_host();
    let stdout = run(&host, &[]);
    assert!(stdout.contains("Hello from a C host."), "{stdout}");
    assert!(stdout.contains("run: complete"), "{stdout}");
    let stdout = run(&host, &["errors"]);
    assert!(stdout.contains("errors: ok"), "{stdout}");

    let Some(valgrind) = valgrind() else {
        eprintln!("valgrind is not installed: the leak check is skipped");
        return;
    };
    for args in [&[][..], &["errors"][..]] {
        let out = Command::new(&valgrind)
            .args([
                "--leak-check=full",
                "--show-leak-kinds=all",
                "--errors-for-leak-kinds=all",
                "--error-exitcode=9",
                "-q",
            ])
            .arg(&host)
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "valgrind {args:?}: {}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
