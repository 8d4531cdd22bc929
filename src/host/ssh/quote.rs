//! Quoting for the remote login shell. ssh joins the words of the remote command with spaces
//! and hands the line to the user's login shell on the other host, which may be `sh`, `bash`,
//! `zsh`, `dash` or `fish`: every word panectl sends is quoted so that each of them reads it back
//! byte for byte.
//!
//! Plain words (letters, digits and `_ . / = : , + -`) go as they are. Anything else goes in single quotes, with each `'`
//! and `\` written outside them as `\'` and `\\`: POSIX shells and fish agree on that form
//! (inside single quotes fish reads `\'` and `\\` as escapes, POSIX shells do not, so those two
//! bytes never appear there).

/// Quotes one word for the remote login shell.
pub fn quote(word: &[u8]) -> Vec<u8> {
    let plain = !word.is_empty()
        && word
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b"_./=:,+-".contains(&b));
    if plain {
        return word.to_vec();
    }
    let mut out = Vec::with_capacity(word.len() + 2);
    let mut open = false;
    for &byte in word {
        if byte == b'\'' || byte == b'\\' {
            if open {
                out.push(b'\'');
                open = false;
            }
            out.push(b'\\');
            out.push(byte);
        } else {
            if !open {
                out.push(b'\'');
                open = true;
            }
            out.push(byte);
        }
    }
    if open {
        out.push(b'\'');
    }
    if out.is_empty() {
        out.extend_from_slice(b"''");
    }
    out
}

/// The remote command line for `words`: each quoted, joined with spaces.
pub fn command_line<W: AsRef<[u8]>>(words: &[W]) -> Vec<u8> {
    let mut out = Vec::new();
    for (index, word) in words.iter().enumerate() {
        if index > 0 {
            out.push(b' ');
        }
        out.extend_from_slice(&quote(word.as_ref()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;
    use std::process::Command;

    /// Words no shell may change: quotes, backslashes, globs, expansions, newlines, bytes
    /// that are not UTF-8.
    fn hostile() -> Vec<Vec<u8>> {
        vec![
            b"plain".to_vec(),
            b"".to_vec(),
            b"two words".to_vec(),
            b"it's".to_vec(),
            b"back\\slash\\".to_vec(),
            b"\\'".to_vec(),
            b"'\\''".to_vec(),
            b"$HOME `id` $(id) ${x}".to_vec(),
            b"*?[a] ~ ~root {a,b}".to_vec(),
            b"line\nbreak; echo no && false | true > /dev/null".to_vec(),
            b"#{pane_id} %1 @2 $3".to_vec(),
            b"\"double\"".to_vec(),
            vec![0xff, 0xfe, b'a', 0xc3],
            b"-L".to_vec(),
        ]
    }

    /// Each shell here prints its arguments back through `printf '%s\0'`.
    fn round_trip(shell: &str) {
        let words = hostile();
        let mut script = b"printf '%s\\0' ".to_vec();
        script.extend_from_slice(&command_line(&words));
        let output = Command::new(shell)
            .arg("-c")
            .arg(std::ffi::OsStr::from_bytes(&script))
            .output()
            .expect("run the shell");
        assert!(output.status.success(), "{shell}: {output:?}");
        let back: Vec<&[u8]> = output.stdout.split(|&b| b == 0).take(words.len()).collect();
        let expected: Vec<&[u8]> = words.iter().map(Vec::as_slice).collect();
        assert_eq!(back, expected, "{shell}");
    }

    #[test]
    fn posix_shells_read_every_word_back() {
        for shell in ["sh", "bash", "dash", "zsh", "fish"] {
            let present = Command::new("sh")
                .args(["-c", &format!("command -v {shell}")])
                .output()
                .is_ok_and(|o| o.status.success());
            // sh and bash are on every machine the suite runs on; the others when installed.
            if present || shell == "sh" || shell == "bash" {
                round_trip(shell);
            }
        }
    }

    #[test]
    fn the_form_has_no_backslash_or_quote_inside_single_quotes() {
        assert_eq!(quote(b"it's"), b"'it'\\''s'");
        assert_eq!(quote(b"a\\b"), b"'a'\\\\'b'");
        assert_eq!(quote(b"\\"), b"\\\\");
        assert_eq!(quote(b""), b"''");
        assert_eq!(quote(b"-S"), b"-S");
        assert_eq!(quote(b"%1"), b"'%1'");
    }
}
