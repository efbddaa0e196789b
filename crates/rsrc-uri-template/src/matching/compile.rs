//! Compiling template pieces into a matching automaton ([`Program`]).
//!
//! Each expression becomes the exact language of its possible expansions over raw URI
//! text (section 3.2 of RFC 6570), with capture slots around every variable's value. The
//! order of alternatives encodes the tie-break rules documented in the crate root:
//!
//! - a variable prefers being defined over being skipped;
//! - values are taken greedily, character by character and item by item;
//! - in `{x,y}`, `{+x,y}` and `{#x,y}`, whose variables are separated by the same `,` that
//!   separates list items, every variable but the last stops at the first comma it can.
//!
//! Percent-encoded triplets are matched as one unit (`%` plus two hex digits), so a
//! variable boundary never falls inside a triplet and a malformed `%` never matches.

use super::pike::{CharClass, Inst, Program};
use crate::chars::{is_reserved, is_unreserved};
use crate::parse::{Expression, Op, VarSpec};

/// A piece of a template, as seen by the compiler.
pub(crate) enum Piece<'a> {
    /// Literal template text.
    Lit(&'a str),
    /// An expression, and the global index of its first variable.
    Expr(&'a Expression, usize),
}

/// A program plus the variables it captures.
#[derive(Clone, Debug)]
pub(crate) struct Compiled {
    pub(crate) prog: Program,
    /// Global variable index of each local capture (slots `2i` and `2i + 1`).
    pub(crate) vars: Vec<usize>,
}

type Label = u32;

#[derive(Clone, Copy)]
enum PInst {
    Char(char),
    Class(u16),
    Split(Label, Label),
    Jmp(Label),
    Save(u16),
    Match,
    Fail,
}

struct Builder {
    insts: Vec<PInst>,
    labels: Vec<u32>,
    classes: Vec<CharClass>,
    vars: Vec<usize>,
    pct: Option<PctClasses>,
}

/// Class indices for pct-encoded UTF-8: any hex digit, `0`-`7`, the first digit of a
/// 2-, 3- and 4-byte lead byte, and the first digit of a continuation byte.
#[derive(Clone, Copy)]
struct PctClasses {
    hex: u16,
    low: u16,
    lead2: u16,
    lead3: u16,
    lead4: u16,
    cont: u16,
}

/// Characters a value of a non-reserved expression may contain (besides `%XX`): what
/// expansion produces (`unreserved`), plus `! * ' ( )` (left unencoded by many clients'
/// component encoders) and any non-ASCII character (IRIs). In `{.x}` a `.` always
/// separates, so it is excluded there.
pub(crate) fn unreserved_value_class(op: Op) -> CharClass {
    CharClass::from_fn(
        |b| {
            (is_unreserved(b) && !(b == b'.' && op == Op::Label))
                || matches!(b, b'!' | b'*' | b'\'' | b'(' | b')')
        },
        true,
    )
}

/// Characters a value of `{+x}` or `{#x}` may contain (besides `%XX`): unreserved and
/// reserved characters except `,` (matched explicitly, as it separates items), and any
/// non-ASCII character.
pub(crate) fn reserved_value_class() -> CharClass {
    CharClass::from_fn(|b| is_unreserved(b) || (is_reserved(b) && b != b','), true)
}

impl Builder {
    fn label(&mut self) -> Label {
        self.labels.push(u32::MAX);
        (self.labels.len() - 1) as Label
    }

    fn bind(&mut self, l: Label) {
        self.labels[l as usize] = self.insts.len() as u32;
    }

    fn emit(&mut self, i: PInst) {
        self.insts.push(i);
    }

    fn class(&mut self, c: CharClass) -> u16 {
        if let Some(i) = self.classes.iter().position(|&k| k == c) {
            return i as u16;
        }
        self.classes.push(c);
        (self.classes.len() - 1) as u16
    }

    /// `body*`, preferring another iteration when `greedy`.
    fn star(&mut self, greedy: bool, mut body: impl FnMut(&mut Self)) {
        let (top, enter, exit) = (self.label(), self.label(), self.label());
        self.bind(top);
        self.emit(if greedy {
            PInst::Split(enter, exit)
        } else {
            PInst::Split(exit, enter)
        });
        self.bind(enter);
        body(self);
        self.emit(PInst::Jmp(top));
        self.bind(exit);
    }

    /// `body?`, preferring `body`.
    fn opt(&mut self, body: impl FnOnce(&mut Self)) {
        let (enter, exit) = (self.label(), self.label());
        self.emit(PInst::Split(enter, exit));
        self.bind(enter);
        body(self);
        self.bind(exit);
    }

    /// `a | b`, preferring `a`.
    fn alt(&mut self, a: impl FnOnce(&mut Self), b: impl FnOnce(&mut Self)) {
        let (la, lb, exit) = (self.label(), self.label(), self.label());
        self.emit(PInst::Split(la, lb));
        self.bind(la);
        a(self);
        self.emit(PInst::Jmp(exit));
        self.bind(lb);
        b(self);
        self.bind(exit);
    }

    /// One value character of class `cls`, or one pct-encoded character: a triplet below
    /// `%80`, or a UTF-8 lead triplet followed by its continuation triplets. Thus a
    /// boundary between values never splits an encoded character; sequences that are not
    /// UTF-8 do not match at all.
    fn unit(&mut self, cls: u16) {
        let k = self.pct_classes();
        let cont = |b: &mut Self| {
            b.emit(PInst::Char('%'));
            b.emit(PInst::Class(k.cont));
            b.emit(PInst::Class(k.hex));
        };
        self.alt(
            |b| b.emit(PInst::Class(cls)),
            |b| {
                b.emit(PInst::Char('%'));
                b.alt(
                    |b| {
                        b.emit(PInst::Class(k.low));
                        b.emit(PInst::Class(k.hex));
                    },
                    |b| {
                        b.alt(
                            |b| {
                                b.emit(PInst::Class(k.lead2));
                                b.emit(PInst::Class(k.hex));
                                cont(b);
                            },
                            |b| {
                                b.alt(
                                    |b| {
                                        b.emit(PInst::Class(k.lead3));
                                        b.emit(PInst::Class(k.hex));
                                        cont(b);
                                        cont(b);
                                    },
                                    |b| {
                                        b.emit(PInst::Class(k.lead4));
                                        b.emit(PInst::Class(k.low));
                                        cont(b);
                                        cont(b);
                                        cont(b);
                                    },
                                );
                            },
                        );
                    },
                );
            },
        );
    }

    /// The classes of hex digits used by [`Self::unit`], interned once per program.
    fn pct_classes(&mut self) -> PctClasses {
        if let Some(k) = self.pct {
            return k;
        }
        let mut set = |bytes: &[u8]| {
            let c = CharClass::from_fn(|b| bytes.contains(&b), false);
            self.class(c)
        };
        let k = PctClasses {
            hex: set(b"0123456789ABCDEFabcdef"),
            low: set(b"01234567"),
            lead2: set(b"CDcd"),
            lead3: set(b"Ee"),
            lead4: set(b"Ff"),
            cont: set(b"89ABab"),
        };
        self.pct = Some(k);
        k
    }

    fn units(&mut self, cls: u16) {
        self.star(true, |b| b.unit(cls));
    }

    /// A literal: ASCII characters as written (hex digits of triplets in either case);
    /// a non-ASCII character either raw or as its pct-encoded UTF-8.
    fn literal(&mut self, lit: &str) {
        let mut chars = lit.chars();
        while let Some(c) = chars.next() {
            if c == '%' {
                self.emit(PInst::Char('%'));
                for _ in 0..2 {
                    let d = chars.next().unwrap_or('0');
                    let (lo, up) = (d.to_ascii_lowercase() as u8, d.to_ascii_uppercase() as u8);
                    let cls = self.class(CharClass::from_fn(|b| b == lo || b == up, false));
                    self.emit(PInst::Class(cls));
                }
            } else if c.is_ascii() {
                self.emit(PInst::Char(c));
            } else {
                let mut encoded = String::new();
                crate::expand::expand_literal(&mut encoded, c.encode_utf8(&mut [0; 4]));
                self.alt(
                    |b| b.emit(PInst::Char(c)),
                    |b| encoded.chars().for_each(|e| b.emit(PInst::Char(e))),
                );
            }
        }
    }

    /// An expression, tracking whether a variable was already emitted (`first` versus
    /// `sep` before the next one): track N ("none yet") and track S ("some").
    fn expression(&mut self, e: &Expression, first_var: usize) {
        let op = e.op;
        let end = self.label();
        let mut n_next = self.label();
        let mut s_next: Option<Label> = None;
        let count = e.vars.len();
        for (i, spec) in e.vars.iter().enumerate() {
            let local = self.vars.len();
            self.vars.push(first_var + i);
            let last = i + 1 == count;
            let (n_after, s_after) = (self.label(), self.label());
            // Track N: this is the first defined variable.
            self.bind(n_next);
            let take = self.label();
            self.emit(PInst::Split(take, n_after));
            self.bind(take);
            if let Some(c) = op.first() {
                self.emit(PInst::Char(c));
            }
            self.var(op, spec, local, last, op.first().is_none());
            self.emit(PInst::Jmp(s_after));
            // Track S: a variable was already emitted.
            if let Some(s) = s_next {
                self.bind(s);
                let take = self.label();
                self.emit(PInst::Split(take, s_after));
                self.bind(take);
                self.emit(PInst::Char(op.sep()));
                self.var(op, spec, local, last, false);
                self.emit(PInst::Jmp(s_after));
            }
            n_next = n_after;
            s_next = Some(s_after);
        }
        // All variables undefined: the expansion is empty. Expressions without a leading
        // operator character must match at least one character.
        self.bind(n_next);
        self.emit(if op.first().is_some() {
            PInst::Jmp(end)
        } else {
            PInst::Fail
        });
        if let Some(s) = s_next {
            self.bind(s);
        }
        self.bind(end);
    }

    /// One variable's text after its `first`/`sep` character.
    fn var(&mut self, op: Op, spec: &VarSpec, local: usize, last: bool, nonempty: bool) {
        let (s0, s1) = ((2 * local) as u16, (2 * local + 1) as u16);
        let cls = self.class(if op.allow_reserved() {
            reserved_value_class()
        } else {
            unreserved_value_class(op)
        });
        match (op.named(), spec.explode()) {
            (false, false) => {
                self.emit(PInst::Save(s0));
                // A non-empty first value: its first list item in non-reserved
                // expressions, where a comma separates items; any character otherwise.
                if nonempty && op.allow_reserved() {
                    self.alt(|b| b.unit(cls), |b| b.emit(PInst::Char(',')));
                } else if nonempty {
                    self.unit(cls);
                }
                self.units(cls);
                let comma_greedy = op.sep() != ',' || last;
                self.star(comma_greedy, |b| {
                    b.emit(PInst::Char(','));
                    b.units(cls);
                });
                self.emit(PInst::Save(s1));
            }
            (false, true) => {
                self.emit(PInst::Save(s0));
                self.plain_item(op, cls, nonempty);
                self.star(true, |b| {
                    b.emit(PInst::Char(op.sep()));
                    b.plain_item(op, cls, false);
                });
                self.emit(PInst::Save(s1));
            }
            (true, false) => {
                for c in spec.name.chars() {
                    self.emit(PInst::Char(c));
                }
                self.alt(
                    |b| {
                        b.emit(PInst::Char('='));
                        b.emit(PInst::Save(s0));
                        b.units(cls);
                        b.star(true, |b| {
                            b.emit(PInst::Char(','));
                            b.units(cls);
                        });
                        b.emit(PInst::Save(s1));
                    },
                    |b| {
                        b.emit(PInst::Save(s0));
                        b.emit(PInst::Save(s1));
                    },
                );
            }
            (true, true) => {
                self.emit(PInst::Save(s0));
                self.named_item(cls);
                self.star(true, |b| {
                    b.emit(PInst::Char(op.sep()));
                    b.named_item(cls);
                });
                self.emit(PInst::Save(s1));
            }
        }
    }

    /// An exploded item of an unnamed expression: `value` or `key=value` (for reserved
    /// expressions `=` is an ordinary value character).
    fn plain_item(&mut self, op: Op, cls: u16, nonempty: bool) {
        if op.allow_reserved() {
            if nonempty {
                self.unit(cls);
            }
            self.units(cls);
            return;
        }
        let tail = |b: &mut Self| {
            b.opt(|b| {
                b.emit(PInst::Char('='));
                b.units(cls);
            });
        };
        if nonempty {
            self.alt(
                |b| {
                    b.unit(cls);
                    b.units(cls);
                    tail(b);
                },
                |b| {
                    b.emit(PInst::Char('='));
                    b.units(cls);
                },
            );
        } else {
            self.units(cls);
            tail(self);
        }
    }

    /// An exploded item of a named expression: `key` or `key=value`, key non-empty.
    fn named_item(&mut self, cls: u16) {
        self.unit(cls);
        self.units(cls);
        self.opt(|b| {
            b.emit(PInst::Char('='));
            b.units(cls);
        });
    }

    fn finish(self) -> Compiled {
        let resolve = |l: Label| self.labels[l as usize];
        let insts = self
            .insts
            .iter()
            .map(|&i| match i {
                PInst::Char(c) => Inst::Char(c),
                PInst::Class(k) => Inst::Class(k),
                PInst::Split(a, b) => Inst::Split(resolve(a), resolve(b)),
                PInst::Jmp(a) => Inst::Jmp(resolve(a)),
                PInst::Save(s) => Inst::Save(s),
                PInst::Match => Inst::Match,
                PInst::Fail => Inst::Fail,
            })
            .collect();
        let insts = thread_jumps(insts);
        let nslots = 2 * self.vars.len();
        Compiled {
            prog: Program {
                insts,
                classes: self.classes,
                nslots,
            },
            vars: self.vars,
        }
    }
}

/// Points every jump at the end of the chain of `Jmp`s it leads to, so the automaton
/// visits fewer instructions per input character.
fn thread_jumps(mut insts: Vec<Inst>) -> Vec<Inst> {
    let end_of_chain = |insts: &[Inst], mut t: u32| {
        for _ in 0..insts.len() {
            match insts.get(t as usize) {
                Some(Inst::Jmp(u)) => t = *u,
                _ => break,
            }
        }
        t
    };
    for i in 0..insts.len() {
        insts[i] = match insts[i] {
            Inst::Jmp(t) => Inst::Jmp(end_of_chain(&insts, t)),
            Inst::Split(a, b) => Inst::Split(end_of_chain(&insts, a), end_of_chain(&insts, b)),
            other => other,
        };
    }
    insts
}

/// Compiles pieces that must match a whole input, in order.
pub(crate) fn compile(pieces: &[Piece<'_>]) -> Compiled {
    let mut b = Builder {
        insts: Vec::new(),
        labels: Vec::new(),
        classes: Vec::new(),
        vars: Vec::new(),
        pct: None,
    };
    for piece in pieces {
        match piece {
            Piece::Lit(lit) => b.literal(lit),
            Piece::Expr(e, first_var) => b.expression(e, *first_var),
        }
    }
    b.emit(PInst::Match);
    b.finish()
}
