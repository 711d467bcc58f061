#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! Issue 15: the C example host (`examples/c/host.c`) and its error checks, built by this test
//! with the system's C compiler (`$CC`, else `cc`) against the static library, then run: a
//! scripted local conversation to a streamed answer, and every entry point given null and
//! malformed arguments (`ae_send_readiness` included, issue 25 point 3). Both run again under
//! valgrind when it is installed (required when `AE_REQUIRE_VALGRIND` is set, as CI does): no
//! leak, no invalid access.

mod common;

use std::process::Command;

fn stdout_of(command: &mut Command) -> String {
    let out = common::run(command);
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{command:?}: {}\n{stdout}{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

#[test]
fn the_c_host_streams_an_answer_and_every_entry_point_refuses_bad_arguments() {
    let host = common::build("host");
    let stdout = stdout_of(&mut Command::new(&host));
    assert!(stdout.contains("Hello from a C host."), "{stdout}");
    assert!(stdout.contains("run: complete"), "{stdout}");
    let stdout = stdout_of(Command::new(&host).arg("errors"));
    assert!(stdout.contains("errors: ok"), "{stdout}");

    let Some(valgrind) = common::valgrind() else {
        eprintln!("valgrind is not installed: the leak check is skipped");
        return;
    };
    for args in [&[][..], &["errors"][..]] {
        stdout_of(common::under_valgrind(&valgrind, &host).args(args));
    }
}
