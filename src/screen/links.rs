//! OSC 8 hyperlinks as tmux 3.4 and later keep them (`hyperlinks.c`): a cell holds a number,
//! the screen a table from numbers to the link's URI and id, and `capture-pane -e` prints the
//! link where the number changes. tmux 3.3 keeps no links.

use std::collections::HashMap;

/// Most links one screen keeps; tmux keeps 5,000 for the whole server and forgets the oldest.
const MAX_LINKS: usize = 5000;

/// A screen's links. See the module documentation.
#[derive(Debug, Clone, Default)]
pub(crate) struct Links {
    /// Number -> (URI, the id the program gave, both as tmux stores them).
    by_number: HashMap<u16, (Box<str>, Box<str>)>,
    /// (URI, id) -> number, for links with an id (an anonymous link is new each time).
    by_id: HashMap<(Box<str>, Box<str>), u16>,
    /// Numbers in the order they were made, to forget the oldest.
    order: std::collections::VecDeque<u16>,
    /// The next number (tmux's `next_inner`, from 1; 0 is no link).
    next: u16,
}

impl Links {
    /// The number of the link to `uri` with the program's `id` (tmux's `hyperlinks_put`): the
    /// same number for the same URI and id, a new one for an anonymous link. 0 when numbers
    /// ran out.
    pub(crate) fn put(&mut self, uri: &[u8], id: Option<&[u8]>) -> u16 {
        let uri: Box<str> = vis(uri).into();
        let id: Box<str> = vis(id.unwrap_or_default()).into();
        if !id.is_empty()
            && let Some(&number) = self.by_id.get(&(uri.clone(), id.clone()))
        {
            return number;
        }
        let number = self.next.max(1);
        let Some(next) = number.checked_add(1) else {
            return 0;
        };
        self.next = next;
        if self.order.len() == MAX_LINKS
            && let Some(oldest) = self.order.pop_front()
            && let Some(key) = self.by_number.remove(&oldest)
        {
            self.by_id.remove(&key);
        }
        if !id.is_empty() {
            self.by_id.insert((uri.clone(), id.clone()), number);
        }
        self.by_number.insert(number, (uri, id));
        self.order.push_back(number);
        number
    }

    /// The URI and id of link `number`, if it is kept.
    pub(crate) fn get(&self, number: u16) -> Option<(&str, &str)> {
        self.by_number
            .get(&number)
            .map(|(uri, id)| (uri.as_ref(), id.as_ref()))
    }
}

/// The OSC 8 sequence `capture-pane -e` prints for a link (tmux's
/// `grid_string_cells_add_hyperlink`); the empty one ends a link.
pub(crate) fn osc8(uri: &str, id: &str, out: &mut Vec<u8>) {
    out.extend_from_slice(b"\x1b]8;");
    if !id.is_empty() {
        out.extend_from_slice(b"id=");
        out.extend_from_slice(id.as_bytes());
    }
    out.push(b';');
    out.extend_from_slice(uri.as_bytes());
    out.extend_from_slice(b"\x1b\\");
}

/// Reads an OSC 8 string after its `8;` (tmux's `input_osc_8`): the parameters up to the
/// first `;` (split at `:` and `;`, the last `id=` counting only if it is the one), then the
/// URI. `None` for a malformed string (ignored); `Some((uri, id))` otherwise, an empty URI
/// ending the link.
pub(crate) fn parse_osc8(text: &[u8]) -> Option<(&[u8], Option<&[u8]>)> {
    let mut id = None;
    let mut start = 0;
    loop {
        let end = start + text[start..].iter().position(|&b| b == b':' || b == b';')?;
        let param = &text[start..end];
        if param.len() >= 4 && param.starts_with(b"id=") {
            if id.is_some() {
                return None;
            }
            id = Some(&param[3..]);
        }
        if text[end] == b';' {
            return Some((&text[end + 1..], id));
        }
        start = end + 1;
    }
}

/// tmux's `utf8_stravis(VIS_OCTAL|VIS_CSTYLE)` for the bytes of an OSC string (which holds no
/// C0 controls): UTF-8 characters as they are, `\` doubled, anything else as `\ooo`.
fn vis(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    while !rest.is_empty() {
        match std::str::from_utf8(rest) {
            Ok(text) => {
                push_vis(text, &mut out);
                break;
            }
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                push_vis(std::str::from_utf8(valid).unwrap_or_default(), &mut out);
                let bad = error.error_len().unwrap_or(after.len()).max(1);
                for byte in &after[..bad] {
                    out.push_str(&format!("\\{byte:03o}"));
                }
                rest = &after[bad..];
            }
        }
    }
    out
}

fn push_vis(text: &str, out: &mut String) {
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\x7f' => out.push_str("\\177"),
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_link_with_an_id_is_found_again_and_an_anonymous_one_is_not() {
        let mut links = Links::default();
        let a = links.put(b"http://x/", Some(b"k"));
        assert_eq!(a, 1);
        assert_eq!(links.put(b"http://x/", Some(b"k")), a);
        assert_ne!(links.put(b"http://x/", None), links.put(b"http://x/", None));
        assert_eq!(links.get(a), Some(("http://x/", "k")));
        assert_eq!(links.get(9), None);
    }

    #[test]
    fn osc8_strings_read_as_tmux_reads_them() {
        assert_eq!(
            parse_osc8(b"id=a;http://x/"),
            Some((&b"http://x/"[..], Some(&b"a"[..])))
        );
        assert_eq!(
            parse_osc8(b":id=k:zz=1;u2"),
            Some((&b"u2"[..], Some(&b"k"[..])))
        );
        assert_eq!(parse_osc8(b";"), Some((&b""[..], None)));
        assert_eq!(parse_osc8(b"no separator"), None);
        assert_eq!(parse_osc8(b"id=a:id=b;u"), None);
    }

    #[test]
    fn uris_are_stored_as_tmux_escapes_them() {
        // Read off tmux 3.5a: `\` doubled, DEL and a stray byte in octal, UTF-8 kept.
        assert_eq!(vis(b"x/\\y z\xc3\xa9 q\x7f\x80"), "x/\\\\y zé q\\177\\200");
        let mut out = Vec::new();
        osc8("u", "", &mut out);
        assert_eq!(out, b"\x1b]8;;u\x1b\\");
    }
}
