//! The README's examples against what panectl prints: every command its table names is a real
//! subcommand, and the sample session's `ls` and `inbox` output has the columns, in the places,
//! that the real output has (a new column or a moved one fails here before a user sees a README
//! that disagrees with the program).

use std::time::Duration;

use crate::support::{TmuxServer, daemon_test_lock};

fn readme() -> String {
    std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).expect("README.md")
}

/// The output the README shows for `$ panectl ARGS` in its console blocks (the lines up to the
/// next command or the end of the block).
fn sample_output(readme: &str, args: &str) -> Vec<String> {
    let command = format!("$ panectl {args}");
    let mut lines = readme.lines().skip_while(|line| line.trim_end() != command);
    assert!(lines.next().is_some(), "the README shows no `{command}`");
    lines
        .take_while(|line| !line.starts_with("$ ") && !line.starts_with("```"))
        .map(str::to_string)
        .collect()
}

/// Where each column of a table line starts: the character offsets of its words that follow two
/// spaces or more (or start the line).
fn column_starts(line: &str) -> Vec<usize> {
    let chars: Vec<char> = line.chars().collect();
    (0..chars.len())
        .filter(|&i| {
            chars[i] != ' ' && (i == 0 || (i >= 2 && chars[i - 1] == ' ' && chars[i - 2] == ' '))
        })
        .collect()
}

/// Whether the README's `sample` of a table `command` prints has the header of the `real`
/// output, and every row of each has its cells starting under its own header's columns.
fn same_table(sample: &[String], real: &str, command: &str) {
    let real: Vec<&str> = real.lines().collect();
    let words = |line: &str| {
        line.split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        words(&sample[0]),
        words(real[0]),
        "the README's `{command}` header is not the real one:\n{}\n{}",
        sample[0],
        real[0]
    );
    let sample: Vec<&str> = sample.iter().map(String::as_str).collect();
    for table in [&sample, &real] {
        let header = column_starts(table[0]);
        assert!(table.len() > 1, "`{command}` shows no row: {table:?}");
        for row in &table[1..] {
            assert!(
                column_starts(row).iter().all(|s| header.contains(s)),
                "a `{command}` row whose cells do not start under its header's:\n{}\n{row}",
                table[0]
            );
        }
    }
}

#[test]
fn every_command_in_the_readme_table_is_a_subcommand() {
    let readme = readme();
    let mut checked = 0;
    for line in readme.lines().filter(|l| l.starts_with("| `panectl ")) {
        let word = line["| `panectl ".len()..]
            .split([' ', '`'])
            .next()
            .unwrap_or_default();
        if word.starts_with('-') || word.is_empty() {
            continue;
        }
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_panectl"))
            .args([word, "--help"])
            .env_remove("TMUX")
            .output()
            .expect("run panectl");
        assert!(
            output.status.success(),
            "the README's table names `panectl {word}`, which is no subcommand: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        checked += 1;
    }
    assert!(
        checked >= 15,
        "only {checked} commands in the README's table"
    );
}

#[test]
fn the_readmes_ls_and_inbox_samples_have_the_real_columns() {
    let _guard = daemon_test_lock();
    let readme = readme();
    let server = TmuxServer::start(120, 31);
    let _daemon = server.start_daemon(&[]);
    server.wait_for_panes(1);

    // `ls`: the same header, and every row's cells start under its table's header.
    let real = server.panectl_ok(&["ls"]);
    same_table(&sample_output(&readme, "ls"), &real, "ls");

    // `inbox`, with a delivered message: the same.
    server.panectl_ok(&["send", "--allow-shell", "%0", "echo from the readme test"]);
    let delivered = || server.panectl_ok(&["inbox"]).contains("delivered");
    server.wait_for("the message delivered", Duration::from_secs(30), delivered);
    same_table(
        &sample_output(&readme, "inbox"),
        &server.panectl_ok(&["inbox"]),
        "inbox",
    );
}
