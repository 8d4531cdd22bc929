//! The parser's states and tmux 3.3a's transition tables (`input.c`): what a byte does in each
//! state and where it leads.

/// Parser states, as tmux names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Ground,
    EscEnter,
    EscIntermediate,
    CsiEnter,
    CsiParameter,
    CsiIntermediate,
    CsiIgnore,
    DcsEnter,
    DcsParameter,
    DcsIntermediate,
    DcsHandler,
    DcsEscape,
    DcsIgnore,
    OscString,
    ApcString,
    RenameString,
    ConsumeSt,
}

/// What a byte does in a state (tmux's transition handlers).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Action {
    None,
    Print,
    Intermediate,
    Parameter,
    Input,
    C0,
    Esc,
    Csi,
    DcsDispatch,
    TopBitSet,
    EndBel,
}

/// tmux's transition tables: what `ch` does in `state`, and the state it leads to.
pub(super) fn transition(state: State, ch: u8) -> (Action, Option<State>) {
    use Action as A;
    use State as S;
    // Anywhere except in a DCS string: CAN and SUB abort, ESC starts over.
    let anywhere = !matches!(state, S::DcsHandler | S::DcsEscape);
    if anywhere {
        match ch {
            0x18 | 0x1a => return (A::C0, Some(S::Ground)),
            0x1b => return (A::None, Some(S::EscEnter)),
            _ => {}
        }
    }
    let c0 = matches!(ch, 0x00..=0x17 | 0x19 | 0x1c..=0x1f);
    match state {
        S::Ground => match ch {
            _ if c0 => (A::C0, None),
            0x20..=0x7e => (A::Print, None),
            0x7f => (A::None, None),
            _ => (A::TopBitSet, None),
        },
        S::EscEnter => match ch {
            _ if c0 => (A::C0, None),
            0x20..=0x2f => (A::Intermediate, Some(S::EscIntermediate)),
            0x50 => (A::None, Some(S::DcsEnter)),
            0x58 | 0x5e => (A::None, Some(S::ConsumeSt)),
            0x5b => (A::None, Some(S::CsiEnter)),
            0x5d => (A::None, Some(S::OscString)),
            0x5f => (A::None, Some(S::ApcString)),
            0x6b => (A::None, Some(S::RenameString)),
            0x30..=0x7e => (A::Esc, Some(S::Ground)),
            _ => (A::None, None),
        },
        S::EscIntermediate => match ch {
            _ if c0 => (A::C0, None),
            0x20..=0x2f => (A::Intermediate, None),
            0x30..=0x7e => (A::Esc, Some(S::Ground)),
            _ => (A::None, None),
        },
        S::CsiEnter => match ch {
            _ if c0 => (A::C0, None),
            0x20..=0x2f => (A::Intermediate, Some(S::CsiIntermediate)),
            0x30..=0x3b => (A::Parameter, Some(S::CsiParameter)),
            0x3c..=0x3f => (A::Intermediate, Some(S::CsiParameter)),
            0x40..=0x7e => (A::Csi, Some(S::Ground)),
            _ => (A::None, None),
        },
        S::CsiParameter => match ch {
            _ if c0 => (A::C0, None),
            0x20..=0x2f => (A::Intermediate, Some(S::CsiIntermediate)),
            0x30..=0x3b => (A::Parameter, None),
            0x3c..=0x3f => (A::None, Some(S::CsiIgnore)),
            0x40..=0x7e => (A::Csi, Some(S::Ground)),
            _ => (A::None, None),
        },
        S::CsiIntermediate => match ch {
            _ if c0 => (A::C0, None),
            0x20..=0x2f => (A::Intermediate, None),
            0x30..=0x3f => (A::None, Some(S::CsiIgnore)),
            0x40..=0x7e => (A::Csi, Some(S::Ground)),
            _ => (A::None, None),
        },
        S::CsiIgnore => match ch {
            _ if c0 => (A::C0, None),
            0x40..=0x7e => (A::None, Some(S::Ground)),
            _ => (A::None, None),
        },
        S::DcsEnter => match ch {
            _ if c0 => (A::None, None),
            0x20..=0x2f => (A::Intermediate, Some(S::DcsIntermediate)),
            0x30..=0x39 | 0x3b => (A::Parameter, Some(S::DcsParameter)),
            0x3a => (A::None, Some(S::DcsIgnore)),
            0x3c..=0x3f => (A::Intermediate, Some(S::DcsParameter)),
            0x40..=0x7e => (A::Input, Some(S::DcsHandler)),
            _ => (A::None, None),
        },
        S::DcsParameter => match ch {
            _ if c0 => (A::None, None),
            0x20..=0x2f => (A::Intermediate, Some(S::DcsIntermediate)),
            0x30..=0x39 | 0x3b => (A::Parameter, None),
            0x3a | 0x3c..=0x3f => (A::None, Some(S::DcsIgnore)),
            0x40..=0x7e => (A::Input, Some(S::DcsHandler)),
            _ => (A::None, None),
        },
        S::DcsIntermediate => match ch {
            _ if c0 => (A::None, None),
            0x20..=0x2f => (A::Intermediate, None),
            0x30..=0x3f => (A::None, Some(S::DcsIgnore)),
            0x40..=0x7e => (A::Input, Some(S::DcsHandler)),
            _ => (A::None, None),
        },
        S::DcsHandler => match ch {
            0x1b => (A::None, Some(S::DcsEscape)),
            _ => (A::Input, None),
        },
        S::DcsEscape => match ch {
            0x5c => (A::DcsDispatch, Some(S::Ground)),
            _ => (A::Input, Some(S::DcsHandler)),
        },
        S::DcsIgnore | S::ConsumeSt => (A::None, None),
        S::OscString => match ch {
            0x07 => (A::EndBel, Some(S::Ground)),
            0x20..=0xff => (A::Input, None),
            _ => (A::None, None),
        },
        S::ApcString | S::RenameString => match ch {
            0x20..=0xff => (A::Input, None),
            _ => (A::None, None),
        },
    }
}
