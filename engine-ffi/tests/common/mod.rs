//! Building and running the C examples: the system's C compiler (`$CC`, else `cc`) against this
//! crate's static library, and valgrind when it is installed (required when
//! `AE_REQUIRE_VALGRIND` is set, as CI does).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long one run of an example may take before it counts as a hang (valgrind included): a
/// limit that only turns a hang into a failure.
const HANG: Duration = Duration::from_secs(300);

/// The directory cargo put this crate's static library in (beside the test's executable).
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

/// Compiles `examples/c/{name}.c` into the target directory (warnings are errors).
pub fn build(name: &str) -> PathBuf {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("c-{name}"));
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_owned());
    let source = crate_dir.join(format!("examples/c/{name}.c"));
    let status = Command::new(&cc)
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-g"])
        .arg("-I")
        .arg(crate_dir.join("include"))
        .arg(&source)
        .arg(library_dir().join("libagent_engine.a"))
        .args(["-lpthread", "-ldl", "-lm", "-o"])
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("the C compiler {cc:?} did not start: {e}"));
    assert!(
        status.success(),
        "{cc} failed to build {}",
        source.display()
    );
    out
}

/// valgrind's path when it is installed; a failure when CI requires it and it is not.
pub fn valgrind() -> Option<PathBuf> {
    let found = Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found && std::env::var_os("AE_REQUIRE_VALGRIND").is_some() {
        panic!("AE_REQUIRE_VALGRIND is set but valgrind is not installed");
    }
    found.then(|| PathBuf::from("valgrind"))
}

/// The command that runs `program` under valgrind: any leak or invalid access exits 9.
pub fn under_valgrind(valgrind: &Path, program: &Path) -> Command {
    let mut command = Command::new(valgrind);
    command
        .args([
            "--leak-check=full",
            "--show-leak-kinds=all",
            "--errors-for-leak-kinds=all",
            "--error-exitcode=9",
            "-q",
        ])
        .arg(program);
    command
}

/// Runs `command` to its end and returns what it wrote; a run that outlasts [`HANG`] is killed
/// and fails the test.
pub fn run(command: &mut Command) -> Output {
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (done, finished) = mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let output = child.wait_with_output();
        let _ = done.send(());
        output
    });
    if finished.recv_timeout(HANG).is_err() {
        let _ = Command::new("kill").arg("-9").arg(pid.to_string()).status();
        panic!("{command:?} did not end: it hangs");
    }
    waiter.join().unwrap().unwrap()
}
