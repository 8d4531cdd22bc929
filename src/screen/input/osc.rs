//! OSC strings (tmux's `input_exit_osc`): the one the screen keeps is OSC 8, a hyperlink,
//! from tmux 3.4. Titles, colours and the clipboard are read from tmux itself.

use super::{OSC_LIMIT, Terminal};

impl Terminal {
    /// A byte of an OSC string, kept where tmux acts on one (OSC 8, from 3.4).
    pub(super) fn osc_input(&mut self, ch: u8) {
        if !self.screen.dialect.keeps_links() || self.osc_discard {
            return;
        }
        if self.osc.len() + 1 >= OSC_LIMIT {
            self.osc_discard = true;
            self.osc.clear();
            return;
        }
        self.osc.push(ch);
    }

    /// The OSC string ended (tmux's `input_exit_osc`, run whatever ends it): OSC 8 sets or
    /// ends the link the pen writes with. Titles, colours and the clipboard are read from tmux
    /// itself, not kept here.
    pub(super) fn osc_end(&mut self) {
        let osc = std::mem::take(&mut self.osc);
        if std::mem::take(&mut self.osc_discard) || !self.screen.dialect.keeps_links() {
            return;
        }
        let digits = osc.iter().take_while(|b| b.is_ascii_digit()).count();
        let rest = match osc.get(digits) {
            Some(b';') => &osc[digits + 1..],
            None => &osc[digits..],
            Some(_) => return,
        };
        if &osc[..digits] != b"8" {
            return;
        }
        if let Some((uri, id)) = crate::screen::links::parse_osc8(rest) {
            self.pen.style.link = if uri.is_empty() {
                0
            } else {
                self.screen.links.put(uri, id)
            };
        }
    }
}
