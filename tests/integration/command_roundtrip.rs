//! Command encoding against a real tmux: whatever bytes go into `set-buffer` through a control
//! client come back byte-exact from `show-buffer`, and nothing in them is expanded or run.

use panectl::control::command::{Line, commands};
use panectl::control::escape::unvis;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

use crate::support::{ControlClient, TmuxServer};

/// Stores `data` in a buffer and reads it back through the same control client.
fn round_trip(client: &mut ControlClient, data: &[u8]) -> Vec<u8> {
    let line = Line::new(commands::set_buffer(b"panectl-test", data).expect("encodable"))
        .then(commands::show_buffer(b"panectl-test").expect("encodable"));
    let replies = client.run(&line);
    let set = replies[0].as_ref().expect("set-buffer ran");
    assert!(set.success, "set-buffer failed: {:?}", set.body);
    let show = replies[1].as_ref().expect("show-buffer ran");
    assert!(show.success, "show-buffer failed: {:?}", show.body);
    unvis(&show.joined_body())
}

#[test]
fn arbitrary_bytes_survive_set_buffer_byte_exact() {
    let server = TmuxServer::start(80, 24);
    let client = std::cell::RefCell::new(server.control_client("$0"));
    let mut runner = TestRunner::new(Config {
        cases: 300,
        failure_persistence: None,
        ..Config::default()
    });
    let any_bytes = prop::collection::vec(1u8..=255, 1..600);
    runner
        .run(&any_bytes, |data| {
            prop_assert_eq!(round_trip(&mut client.borrow_mut(), &data), data);
            Ok(())
        })
        .expect("every byte string came back unchanged");
}

#[test]
fn parser_and_format_specials_are_carried_literally() {
    let server = TmuxServer::start(80, 24);
    let mut client = server.control_client("$0");
    let witness = tempfile::NamedTempFile::new().expect("temp file");
    let witness_path = witness.path().to_string_lossy().into_owned();
    std::fs::remove_file(&witness_path).expect("remove the witness");
    let cases: Vec<Vec<u8>> = vec![
        format!("#(touch {witness_path})").into_bytes(),
        b"#{pane_id} #{session_name} ##".to_vec(),
        b"a ; kill-server".to_vec(),
        b"\\; \\' \\\" ~ ~/x $HOME ${HOME}".to_vec(),
        b"%if 1\n%endif".to_vec(),
        b"{ brace } }".to_vec(),
        b"-n starts with a dash".to_vec(),
        b"#comment".to_vec(),
        b"'''".to_vec(),
        b"%end 1 2 3\n%begin 1 2 3".to_vec(),
        b"\r\n\t\x1b[31m\x7f\xff\xfe caf\xc3\xa9 \xe6\x97".to_vec(),
        b" ".to_vec(),
        b"\n".to_vec(),
    ];
    for data in cases {
        assert_eq!(
            round_trip(&mut client, &data),
            data,
            "{}",
            panectl::raw::escape(&data)
        );
    }
    assert!(
        !std::path::Path::new(&witness_path).exists(),
        "a #() in the data was run by tmux"
    );
    // The server is still there (the `; kill-server` was data).
    server.tmux(&["has-session", "-t", "$0"]);
}
