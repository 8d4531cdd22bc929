//! The line filter in front of the MCP server: rmcp drops a line that is not JSON, or is
//! longer than its limit, without a word, and the client waits for an answer that never comes.
//! JSON-RPC says such input gets a parse error (`-32700`, id `null`); this filter reads the
//! client's lines (never holding more than [`MAX_LINE`] of one), answers those itself, and
//! passes the others on.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest line taken, without its line end (16 MiB).
pub const MAX_LINE: usize = 16 << 20;

/// JSON-RPC's code for input that is not JSON.
pub const PARSE_ERROR: i64 = -32700;

/// A JSON-RPC parse error answer (id `null`: no id can be read), as a line.
pub fn parse_error(reason: &str) -> Vec<u8> {
    let mut line = serde_json::json!({
        "jsonrpc": "2.0",
        "id": null,
        "error": { "code": PARSE_ERROR, "message": format!("Parse error: {reason}") },
    })
    .to_string()
    .into_bytes();
    line.push(b'\n');
    line
}

/// One line read, or what stopped it.
enum Read {
    /// A whole line (without its line end) is in the buffer.
    Line,
    /// The line was longer than [`MAX_LINE`]; it was skipped to its end.
    TooLong,
    /// The input ended.
    End,
}

/// Reads the next line into `line`, never holding more than `MAX_LINE + 1` bytes of it.
async fn read_line<R: AsyncBufRead + Unpin>(input: &mut R, line: &mut Vec<u8>) -> Read {
    line.clear();
    let mut too_long = false;
    loop {
        let available = match input.fill_buf().await {
            Ok(available) => available,
            Err(error) => {
                tracing::debug!(%error, "reading the MCP input failed");
                return Read::End;
            }
        };
        if available.is_empty() {
            return match (too_long, line.is_empty()) {
                (true, _) => Read::TooLong,
                (false, true) => Read::End,
                (false, false) => Read::Line,
            };
        }
        let newline = memchr::memchr(b'\n', available);
        let take = newline.map_or(available.len(), |at| at + 1);
        if !too_long {
            let content = newline.map_or(available.len(), |at| at);
            if line.len() + content > MAX_LINE + 1 {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(&available[..content]);
            }
        }
        input.consume(take);
        if newline.is_some() {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return if too_long || line.len() > MAX_LINE {
                line.clear();
                Read::TooLong
            } else {
                Read::Line
            };
        }
    }
}

/// Reads the client's lines from `input`: JSON ones go on to `server` (the MCP server's
/// input), others are answered with a parse error on `answers`. Ends at the end of `input`,
/// closing `server`.
pub async fn filter_input<R, W>(input: R, mut server: W, answers: mpsc::Sender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::with_capacity(64 * 1024, input);
    let mut line = Vec::new();
    loop {
        let answer = match read_line(&mut input, &mut line).await {
            Read::End => break,
            Read::TooLong => parse_error(&format!("the line is longer than {MAX_LINE} bytes")),
            Read::Line if line.iter().all(u8::is_ascii_whitespace) => continue,
            Read::Line => match serde_json::from_slice::<serde::de::IgnoredAny>(&line) {
                Ok(_) => {
                    line.push(b'\n');
                    if server.write_all(&line).await.is_err() {
                        break;
                    }
                    // A line as long as the limit need not stay allocated.
                    if line.capacity() > 1 << 20 {
                        line = Vec::new();
                    }
                    continue;
                }
                Err(error) => parse_error(&format!("the line is not JSON ({error})")),
            },
        };
        if line.capacity() > 1 << 20 {
            line = Vec::new();
        }
        if answers.send(answer).await.is_err() {
            break;
        }
    }
    let _ = server.shutdown().await;
}

/// Copies the MCP server's output lines from `server` to `output`, with the answers of
/// `answers` between whole lines. Ends when both have ended.
pub async fn merge_output<R, W>(server: R, mut answers: mpsc::Receiver<Vec<u8>>, mut output: W)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut server = BufReader::new(server);
    // Kept across iterations: a read interrupted by an answer resumes its line.
    let mut line = Vec::new();
    let mut server_open = true;
    let mut answers_open = true;
    while server_open || answers_open {
        let write = tokio::select! {
            read = server.read_until(b'\n', &mut line), if server_open => match read {
                Ok(0) | Err(_) => {
                    server_open = false;
                    if line.is_empty() { continue; }
                    std::mem::take(&mut line)
                }
                Ok(_) if line.ends_with(b"\n") => std::mem::take(&mut line),
                Ok(_) => continue,
            },
            answer = answers.recv(), if answers_open => match answer {
                Some(answer) => answer,
                None => {
                    answers_open = false;
                    continue;
                }
            },
        };
        if output.write_all(&write).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn filtered(input: Vec<u8>) -> (Vec<u8>, Vec<Vec<u8>>) {
        let (to_server, mut server_side) = tokio::io::duplex(1 << 16);
        let (sender, mut receiver) = mpsc::channel(16);
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut server_side, &mut got)
                .await
                .unwrap();
            got
        });
        filter_input(&input[..], to_server, sender).await;
        let mut answers = Vec::new();
        while let Some(answer) = receiver.recv().await {
            answers.push(answer);
        }
        (reader.await.unwrap(), answers)
    }

    #[tokio::test]
    async fn json_goes_on_and_the_rest_is_answered() {
        let mut input = b"{\"a\":1}\r\nnot json\n\n".to_vec();
        input.extend(std::iter::repeat_n(b'"', MAX_LINE + 10));
        input.extend(b"\n[1]");
        let (passed, answers) = filtered(input).await;
        assert_eq!(passed, b"{\"a\":1}\n[1]\n");
        assert_eq!(answers.len(), 2);
        for answer in &answers {
            let value: serde_json::Value = serde_json::from_slice(answer).unwrap();
            assert_eq!(value["error"]["code"], PARSE_ERROR);
            assert!(value["id"].is_null());
        }
        assert!(String::from_utf8_lossy(&answers[1]).contains("longer than"));
    }
}
