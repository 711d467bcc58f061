#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs
)]
//! `agent-chat` in a real terminal (issues 16 and 25): the built binary under a pseudo-terminal
//! (rexpect) of a set width, against its embedded simulator with a slow answer
//! (`--answer-delay-ms`). What it writes is rendered as a terminal would show it (vt100), so the
//! tests check what the person sees. Every step waits for what it expects (the limits only turn
//! a hang into a failure); nothing sleeps.

use std::process::Command;
use std::time::{Duration, Instant};

use rexpect::session::PtySession;

/// How long one expectation may wait before the test fails (a hang, not a speed check).
const EXPECT_LIMIT_MS: u64 = 30_000;

/// The line the chat prints once the person can write.
const READY: &str = "Connected to Demo Agent. Write a message (/help).";

/// A message whose echoed answer streams for several seconds at 150-200 ms a word.
const LONG: &str = "one two three four five six seven eight nine ten eleven twelve thirteen \
    fourteen fifteen sixteen seventeen eighteen nineteen twenty twentyone twentytwo twentythree \
    twentyfour twentyfive last";

/// The run statuses that are shown in place only, never kept on the screen (issue 25, point 1).
const TRANSIENT: [&str; 5] = [
    "Working on your request.",
    "Thinking...",
    "Writing a response...",
    "Sending queued message",
    "Run completed.",
];

/// `agent-chat` under a pseudo-terminal, and the screen it drew.
struct Term {
    p: PtySession,
    screen: vt100::Parser,
    /// Every byte read.
    bytes: Vec<u8>,
    /// The same, as text (for the order in which things were written).
    raw: String,
    cols: u16,
}

impl Term {
    /// Starts `agent-chat` in a terminal `cols` wide and waits for its first prompt.
    fn start(cols: u16, extra: &[&str]) -> Term {
        let mut cmd = Command::new("sh");
        cmd.env_remove("AGENT_CHAT_TOKEN")
            .env_remove("RUST_LOG")
            .env("TERM", "xterm")
            .arg("-c")
            .arg(format!("stty cols {cols} rows 50 && exec \"$0\" \"$@\""))
            .arg(env!("CARGO_BIN_EXE_agent-chat"))
            .args(extra);
        let options = rexpect::reader::Options::new()
            .timeout_ms(Some(EXPECT_LIMIT_MS))
            .strip_ansi_escape_codes(false);
        let p = rexpect::spawn_with_options(cmd, options).unwrap();
        // Rows enough that nothing scrolls away: cursor moves are relative either way.
        let mut t = Term {
            p,
            screen: vt100::Parser::new(2000, cols, 0),
            bytes: Vec::new(),
            raw: String::new(),
            cols,
        };
        t.until("the first prompt", |t| {
            t.text().contains(READY) && t.prompt_is("")
        });
        t
    }

    /// Reads what has come (waiting for something).
    fn read(&mut self) {
        let (before, got) = match self.p.exp_regex("(?s).+") {
            Ok(read) => read,
            Err(e) => {
                panic!("{e}; the screen:\n{}", self.text())
            }
        };
        self.take(&before);
        self.take(&got);
    }

    /// Takes what rexpect read (a char per byte) onto the screen.
    fn take(&mut self, read: &str) {
        self.bytes.extend(read.chars().map(|c| c as u32 as u8));
        self.raw = String::from_utf8_lossy(&self.bytes).into_owned();
        // Parsed whole each time (the output of a test is small).
        self.screen = vt100::Parser::new(2000, self.cols, 0);
        self.screen.process(&self.bytes);
    }

    /// Reads until `done` holds of the screen.
    fn until(&mut self, what: &str, done: impl Fn(&Term) -> bool) {
        let limit = Instant::now() + Duration::from_millis(2 * EXPECT_LIMIT_MS);
        while !done(self) {
            if Instant::now() > limit {
                panic!("never saw {what}; the screen:\n{}", self.text());
            }
            self.read();
        }
    }

    /// The screen as lines: a row the terminal wrapped is joined to the next.
    fn text(&self) -> String {
        self.screen.screen().contents()
    }

    /// The screen's rows as drawn, `cols` wide at most.
    fn rows(&self) -> Vec<String> {
        self.screen.screen().rows(0, self.cols).collect()
    }

    /// Whether the cursor stands on the prompt's row, with `typed` after the prompt.
    fn prompt_is(&self, typed: &str) -> bool {
        let (row, _) = self.screen.screen().cursor_position();
        self.rows()
            .get(usize::from(row))
            .is_some_and(|r| r.trim_end() == format!("> {typed}").trim_end())
    }

    fn send_line(&mut self, line: &str) {
        self.p.send_line(line).unwrap();
        self.p.flush().unwrap();
    }

    fn send(&mut self, keys: &str) {
        self.p.send(keys).unwrap();
        self.p.flush().unwrap();
    }

    /// Reads to the end and returns the exit code.
    fn finish(mut self) -> (i32, Term) {
        let rest = self.p.exp_eof().unwrap();
        self.take(&rest);
        let code = match self.p.process().wait().unwrap() {
            nix::sys::wait::WaitStatus::Exited(_, code) => code,
            other => panic!("not exited: {other:?}"),
        };
        (code, self)
    }
}

/// The screen's line holding `needle`, and its index.
fn line_with(text: &str, needle: &str) -> (usize, String) {
    text.lines()
        .enumerate()
        .find(|(_, l)| l.contains(needle))
        .map(|(i, l)| (i, l.to_owned()))
        .unwrap_or_else(|| panic!("no line with {needle:?} in:\n{text}"))
}

/// [`LONG`] streaming slowly in a terminal `cols` wide, the chat recording into a fresh trace
/// file named `name`.
fn long_answer_recorded(name: &str, cols: u16) -> (Term, std::path::PathBuf) {
    let trace = temp(name);
    let _ = std::fs::remove_file(&trace);
    let record = [
        "--answer-delay-ms",
        "200",
        "--record",
        trace.to_str().unwrap(),
    ];
    let mut t = Term::start(cols, &record);
    t.send_line(LONG);
    t.until("the answer streaming", |t| {
        t.text().contains("You said: one two")
    });
    (t, trace)
}

/// `/quit` leaves, exit 0.
fn quits(mut t: Term) {
    t.send_line("/quit");
    let (code, _) = t.finish();
    assert_eq!(code, 0);
}

fn temp(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("agent-chat-pty-{name}-{}", std::process::id()))
}

/// Issue 25, point 1: the answer flows at the terminal's width (wrapped by the terminal, no
/// break of the chat's own at 80 columns), streams as it comes (its words are written as they
/// arrive, not a line at a time), and leaves no run status on the screen; the prompt comes
/// back under it.
fn an_answer_flows_at(cols: u16) {
    let mut t = Term::start(cols, &["--answer-delay-ms", "20"]);
    t.send_line(LONG);
    let answer = format!("You said: {LONG}");
    t.until("the whole answer and the prompt", |t| {
        t.text().contains(&answer) && t.prompt_is("")
    });
    let (_, line) = line_with(&t.text(), "You said:");
    assert_eq!(line.trim_end(), answer, "the answer is one line, whole");
    // Its rows are full to the terminal's width but the last.
    let rows = t.rows();
    let first = rows
        .iter()
        .position(|r| r.starts_with("You said:"))
        .unwrap();
    let needed = answer.chars().count().div_ceil(usize::from(cols));
    for row in &rows[first..first + needed - 1] {
        assert_eq!(row.chars().count(), usize::from(cols), "{rows:#?}");
    }
    assert!(rows[first + needed - 1].ends_with("last"), "{rows:#?}");
    // Written as it came: the first words before the rest arrived, apart.
    assert!(!t.raw.contains("You said: one two three"), "{:?}", t.raw);
    for status in TRANSIENT {
        assert!(
            !t.text().contains(status),
            "{status:?} stayed:\n{}",
            t.text()
        );
    }
    quits(t);
}

#[test]
fn an_answer_flows_at_60_columns() {
    an_answer_flows_at(60);
}

#[test]
fn an_answer_flows_at_120_columns() {
    an_answer_flows_at(120);
}

/// Issue 25, point 1: a message sent while an answer streams is queued; the line the person
/// sent, the "queued" notice and the queued run's status and answer all come after the answer
/// has ended its line, never inside it; the typed text is never mixed into the answer.
fn a_queued_message_waits_for_the_answer_at(cols: u16) {
    let mut t = Term::start(cols, &["--answer-delay-ms", "150"]);
    t.send_line(LONG);
    t.until("the answer streaming", |t| {
        t.text().contains("You said: one")
    });
    t.send_line("queued one");
    t.until("the queued answer and the prompt", |t| {
        t.text().contains("You said: queued one") && t.prompt_is("")
    });
    let text = t.text();
    let (answer_at, answer) = line_with(&text, "You said: one");
    assert_eq!(answer.trim_end(), format!("You said: {LONG}"), "{text}");
    let (sent_at, _) = line_with(&text, "> queued one");
    let (notice_at, _) = line_with(
        &text,
        "(queued: Demo Agent is working. Your message will send when it finishes.)",
    );
    let (queued_at, queued) = line_with(&text, "You said: queued one");
    assert_eq!(queued.trim_end(), "You said: queued one");
    assert!(
        answer_at < sent_at && sent_at < notice_at && notice_at < queued_at,
        "{text}"
    );
    for status in TRANSIENT {
        assert!(!text.contains(status), "{status:?} stayed:\n{text}");
    }
    // As written: the queued run's status (in place) only after the first answer's last word.
    let end = t.raw.find("last").unwrap();
    for later in ["(queued: ", "Sending queued message", "You said: queued"] {
        if let Some(at) = t.raw.find(later) {
            assert!(
                at > end,
                "{later:?} was written inside the answer: {:?}",
                t.raw
            );
        }
    }
    quits(t);
}

#[test]
fn a_queued_message_waits_for_the_answer_at_60_columns() {
    a_queued_message_waits_for_the_answer_at(60);
}

#[test]
fn a_queued_message_waits_for_the_answer_at_120_columns() {
    a_queued_message_waits_for_the_answer_at(120);
}

/// Issue 25, point 1: `/switch` while an answer streams: nothing of that answer prints under
/// the other session's header; its end is noted with its session's name, and the answer is
/// there, whole, when its session is shown again.
fn a_switch_during_an_answer_at(cols: u16) {
    let mut t = Term::start(cols, &["--answer-delay-ms", "150"]);
    t.send_line("/new");
    t.until("the new session", |t| {
        t.text().contains("(starting a new session)")
    });
    // The list shows the new session once the engine read it again.
    let mut asked = 0;
    let listed = loop {
        t.send_line("/sessions");
        asked += 1;
        t.until("the list", |t| {
            t.text().matches("> /sessions").count() == asked && t.prompt_is("")
        });
        let text = t.text();
        let last = text.rsplit("> /sessions").next().unwrap().to_owned();
        if last.contains("*  1  Agent session ") && last.contains("   2  agent-chat  sess-") {
            break last;
        }
        assert!(asked < 100, "the new session is never listed:\n{text}");
    };
    let (_, row) = line_with(&listed, "*  1  Agent session ");
    let new_uid = row.trim_end().rsplit(' ').next().unwrap().to_owned();
    assert!(new_uid.starts_with("sess-"), "{row}");
    assert!(
        !row.contains(&format!("{new_uid}  {new_uid}")),
        "the uid shown twice: {row}"
    );
    t.send_line(LONG);
    t.until("the answer streaming", |t| {
        t.text().contains("You said: one")
    });
    t.send_line("/switch 2");
    let note = format!("(session {new_uid} answered out of view: /switch to it to read it)");
    t.until("the note of the answer's end", |t| {
        t.text().contains(&note) && t.prompt_is("")
    });
    let text = t.text();
    let (header_at, _) = line_with(&text, "(no messages in this session yet)");
    let (switch_at, _) = line_with(&text, "(switching to sess-0001)");
    assert!(switch_at < header_at, "{text}");
    for line in text.lines().skip(switch_at) {
        for word in ["You said", "teen", "twenty", "last"] {
            assert!(
                !line.contains(word) || line.contains(&note),
                "the other session's answer under this one: {line:?}\n{text}"
            );
        }
    }
    // Kept for when its session is shown. The list's rows come after its command's echo: wait
    // for the row itself (under load the prompt can be back before the rows are printed).
    t.send_line("/sessions");
    t.until("the list again", |t| {
        let text = t.text();
        text.matches("> /sessions").count() == asked + 1
            && text
                .rsplit("> /sessions")
                .next()
                .is_some_and(|l| l.contains(&new_uid))
            && t.prompt_is("")
    });
    let text = t.text();
    let last = text.rsplit("> /sessions").next().unwrap();
    let (_, row) = line_with(last, &new_uid);
    let n = row.split_whitespace().next().unwrap().to_owned();
    t.send_line(&format!("/switch {n}"));
    t.until("the history", |t| t.text().contains("(end of the history)"));
    assert!(
        t.text().contains(&format!("agent: You said: {LONG}")),
        "{}",
        t.text()
    );
    quits(t);
}

#[test]
fn a_switch_during_an_answer_at_60_columns() {
    a_switch_during_an_answer_at(60);
}

#[test]
fn a_switch_during_an_answer_at_120_columns() {
    a_switch_during_an_answer_at(120);
}

/// The prompt shows, a message streams an answer that ends its line, and the Up arrow recalls
/// the last line (sent again as the same message, never as `^[[A`).
#[test]
fn the_prompt_an_answer_and_the_history() {
    let mut t = Term::start(80, &["--answer-delay-ms", "20"]);
    t.send_line("hello there");
    t.until("the answer", |t| {
        t.text().contains("You said: hello there") && t.prompt_is("")
    });
    // Up, then Enter: the same line again.
    t.send("\x1b[A");
    t.until("the line recalled", |t| t.prompt_is("hello there"));
    t.send("\r");
    t.until("the second answer", |t| {
        t.text().matches("You said: hello there").count() == 2 && t.prompt_is("")
    });
    assert!(!t.text().contains("[A"), "{}", t.text());
    t.send_line("/quit");
    let (code, t) = t.finish();
    assert!(!t.text().contains("You said: [A"), "{}", t.text());
    assert_eq!(code, 0);
}

/// Issue 25, point 1: Ctrl-C while an answer streams stops it. What was typed stays on the
/// prompt's line and is never sent nor mixed into the answer; the stop's notices come after
/// the part of the answer that arrived, in the order things happened (the Ctrl-C, the stop
/// requested, the run cancelled); a second Ctrl-C leaves, exit 0, and the `--record` trace is
/// written.
#[test]
fn ctrl_c_stops_the_answer_and_a_second_one_leaves() {
    let (mut t, trace) = long_answer_recorded("trace.jsonl", 100);
    t.send("xyz");
    t.until("the typed text", |t| t.prompt_is("xyz"));
    t.send("\x03");
    t.until("the stop", |t| {
        t.text().contains("· Run cancellation requested.") && t.prompt_is("")
    });
    let text = t.text();
    let (answer_at, answer) = line_with(&text, "You said: one");
    assert!(
        !answer.contains("last"),
        "the answer ran to its end: {text}"
    );
    assert!(!answer.contains("xyz"), "typed text in the answer: {text}");
    let (ctrl_c_at, _) = line_with(&text, "(stopping the answer: Ctrl-C again leaves)");
    let (requested_at, _) = line_with(&text, "· Run cancellation requested.");
    assert!(answer_at < ctrl_c_at && ctrl_c_at < requested_at, "{text}");
    // RU-22: "Run cancelled." at the stop, "Run cancellation requested." after the Agent's
    // answer, in that order (before issue 27 the held first line came out second). The chat
    // follows the latest snapshot: when the answer comes first, only the second line shows.
    if text.contains("· Run cancelled.") {
        let (cancelled_at, _) = line_with(&text, "· Run cancelled.");
        assert!(
            ctrl_c_at < cancelled_at && cancelled_at < requested_at,
            "{text}"
        );
    }
    assert!(!text.contains("You said: xyz"), "{text}");
    t.send("\x03");
    let (code, t) = t.finish();
    let (_, answer) = line_with(&t.text(), "You said: one");
    assert!(!answer.contains("last"), "{}", t.text());
    assert_eq!(code, 0);
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.lines().count() > 3, "{written}");
    for line in written.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
    }
    assert!(written.contains(LONG), "the message is in the trace");
}

/// Two Ctrl-C in a row in the middle of an answer: the chat leaves with the answer's line
/// ended and the trace written.
#[test]
fn two_ctrl_c_mid_answer_leave_with_the_line_closed() {
    let (mut t, trace) = long_answer_recorded("twice.jsonl", 80);
    t.send("\x03");
    t.send("\x03");
    let (code, t) = t.finish();
    let (_, answer) = line_with(&t.text(), "You said: one");
    assert!(!answer.contains("last"), "{}", t.text());
    // The shell's next output starts on a line of its own: the cursor is at a row's start.
    assert_eq!(t.screen.screen().cursor_position().1, 0, "{}", t.text());
    assert_eq!(code, 0);
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.contains(LONG), "{written}");
}

/// The notices: a message written while the Agent works is queued; a stop holds it and says
/// how to release it; `/next` releases it (its answer follows); commands with nothing to do say
/// so; Ctrl-D on an empty line leaves, taking the prompt away (issue 25, point 1: no stray
/// "> " is left on the screen).
#[test]
fn queue_hold_commands_with_nothing_to_do_and_ctrl_d() {
    let mut t = Term::start(100, &["--answer-delay-ms", "200"]);
    t.send_line(LONG);
    t.until("the answer streaming", |t| {
        t.text().contains("You said: one")
    });
    t.send_line("queued one");
    t.send_line("/stop");
    t.until("the hold", |t| {
        t.text()
            .contains("· Held after you stopped Demo Agent. (1 waiting; /next sends the first)")
    });
    assert!(
        t.text()
            .contains("(queued: Demo Agent is working. Your message will send when it finishes.)")
    );
    // RU-22: the stop's lines in the order they came (the first may be passed over when the
    // Agent answers before the chat looks: it follows the latest snapshot).
    t.until("the stop's lines", |t| {
        let text = t.text();
        let cancelled = text.find("· Run cancelled.");
        let requested = text.find("· Run cancellation requested.");
        matches!((cancelled, requested), (Some(c), Some(r)) if c < r)
            || (cancelled.is_none() && requested.is_some())
    });
    t.send_line("/next");
    t.until("the queued answer", |t| {
        t.text()
            .contains("(the first of 1 queued message(s) goes once the agent is idle)")
            && t.text().contains("You said: queued one")
            && t.prompt_is("")
    });
    for (command, answer) in [
        ("/next", "(nothing is queued)"),
        (
            "/choose acme::large",
            "(no session is waiting for a model: /model ID changes this one's)",
        ),
        (
            "/retry",
            "(nothing to retry: the default session is not in error)",
        ),
    ] {
        t.send_line(command);
        t.until(answer, |t| t.text().contains(answer) && t.prompt_is(""));
    }
    // RU-22: with a session selected a stop always asks the Agent, even with nothing running.
    t.send_line("/stop");
    t.until("a second cancel", |t| {
        t.text().matches("· Run cancellation requested.").count() == 2 && t.prompt_is("")
    });
    assert!(
        !t.text().contains("There is no running work to stop."),
        "{}",
        t.text()
    );
    t.send("\x04");
    let (code, t) = t.finish();
    assert_eq!(code, 0);
    let rows = t.rows();
    assert!(
        rows.iter().all(|r| r.trim_end() != ">"),
        "a stray prompt: {rows:#?}"
    );
}

/// `/switch N` shows the session's history; `/switch` past the list says there is no such
/// session (issue 25, point 1).
#[test]
fn switch_shows_the_history() {
    let mut t = Term::start(80, &["--answer-delay-ms", "10"]);
    t.send_line("remember this");
    t.until("the answer", |t| {
        t.text().contains("You said: remember this") && t.prompt_is("")
    });
    t.send_line("/sessions");
    t.until("the list", |t| t.text().contains("*  1  agent-chat  sess-"));
    t.send_line("/switch 9");
    t.until("no session 9", |t| {
        t.text().contains("No session 9 in the last list (1 to 1).")
    });
    t.send_line("/switch 1");
    t.until("the history", |t| t.text().contains("(end of the history)"));
    let text = t.text();
    assert!(text.contains("(switching to sess-"), "{text}");
    assert!(text.contains("you: remember this"), "{text}");
    assert!(text.contains("agent: You said: remember this"), "{text}");
    quits(t);
}

/// Ctrl-C at an empty prompt: the notice shows above the prompt and no stray "> " row is left
/// behind; the prompt comes back below the notice.
#[test]
fn ctrl_c_at_an_empty_prompt_leaves_no_stray_prompt_line() {
    let mut t = Term::start(80, &[]);
    t.send("\x03");
    let notice = "(nothing is running: Ctrl-C again, Ctrl-D or /quit leaves)";
    t.until("the notice", |t| {
        t.text().contains(notice) && t.prompt_is("")
    });
    let rows = t.rows();
    let at = rows.iter().position(|r| r.contains(notice)).unwrap();
    assert_eq!(rows[at + 1].trim_end(), ">", "{rows:#?}");
    assert!(
        rows[..at].iter().all(|r| r.trim_end() != ">"),
        "a stray prompt: {rows:#?}"
    );
    quits(t);
}

/// In a terminal too, a platform nothing listens on is named in one sentence, no prompt is
/// offered, and the exit status is 1.
#[test]
fn an_unreachable_platform_in_a_terminal_exits_1_with_its_cause() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_agent-chat"));
    cmd.env("AGENT_CHAT_TOKEN", "t")
        .env_remove("RUST_LOG")
        .env("TERM", "xterm")
        .args(["--platform", &format!("http://127.0.0.1:{port}")])
        .args(["--environment", "e", "--agent", "a", "--user", "u"]);
    let options = rexpect::reader::Options::new()
        .timeout_ms(Some(EXPECT_LIMIT_MS))
        .strip_ansi_escape_codes(true);
    let mut p = rexpect::spawn_with_options(cmd, options).unwrap();
    let out = p.exp_eof().unwrap();
    assert_eq!(
        out.trim_end(),
        format!(
            "agent-chat: Nothing is listening at 127.0.0.1:{port} (connection refused): check the --platform address and that the platform is running."
        )
    );
    assert!(!out.contains("> "), "a prompt: {out:?}");
    assert_eq!(exit_code(&p), 1);
}

/// SIGTERM while the line editor reads (its raw mode on): the chat ends like a second Ctrl-C,
/// with exit status 143, the `--record` trace written and the terminal back in its ordinary
/// mode (canonical input, signals), not left raw.
#[test]
fn sigterm_writes_the_trace_and_restores_the_terminal() {
    use nix::sys::termios::{LocalFlags, tcgetattr};
    let trace = temp("sigterm.jsonl");
    let _ = std::fs::remove_file(&trace);
    let mut t = Term::start(
        80,
        &[
            "--answer-delay-ms",
            "20",
            "--record",
            trace.to_str().unwrap(),
        ],
    );
    t.send_line("hello there");
    t.until("the answer", |t| {
        t.text().contains("You said: hello there") && t.prompt_is("")
    });
    let pty = t.p.process().get_file_handle().unwrap();
    // The editor reads: the terminal is raw.
    let raw = tcgetattr(&pty).unwrap();
    assert!(!raw.local_flags.contains(LocalFlags::ICANON), "{raw:?}");
    t.p.process_mut()
        .signal(nix::sys::signal::Signal::SIGTERM)
        .unwrap();
    let (code, _) = t.finish();
    assert_eq!(code, 143);
    let mode = tcgetattr(&pty).unwrap();
    assert!(
        mode.local_flags
            .contains(LocalFlags::ICANON | LocalFlags::ISIG),
        "the terminal was left raw: {mode:?}"
    );
    let written = std::fs::read_to_string(&trace).unwrap();
    let _ = std::fs::remove_file(&trace);
    assert!(written.contains("hello there"), "{written}");
}

/// The exit code of the ended session.
fn exit_code(p: &PtySession) -> i32 {
    match p.process().wait().unwrap() {
        nix::sys::wait::WaitStatus::Exited(_, code) => code,
        other => panic!("not exited: {other:?}"),
    }
}
